/**
 * Decentralized NATS authentication, as production's server runs it: an
 * operator, its system account, one account allowed JetStream (both
 * signed by the operator), and
 * users of that account whose `.creds` files (their JWT and nkey seed) the
 * clients log in with, by signing the server's nonce.
 */
import {
  createAccount,
  createOperator,
  createUser,
  encodeAccount,
  encodeOperator,
  encodeUser,
  fmtCreds,
} from '@nats-io/jwt';
import type { NatsOperatorAuth } from '../../infra/local/nats-server.ts';

export interface NatsAccounts {
  /** What the server is configured with. */
  operator: NatsOperatorAuth;
  /** A new user of the account: its `.creds` file's content. */
  userCreds(name: string): Promise<string>;
}

/** JetStream and connections without limits, as a deployment's account. */
const UNLIMITED = {
  conn: -1,
  subs: -1,
  data: -1,
  payload: -1,
  mem_storage: -1,
  disk_storage: -1,
  streams: -1,
  consumer: -1,
};

export async function natsAccounts(): Promise<NatsAccounts> {
  const operator = createOperator();
  const system = createAccount();
  const account = createAccount();
  const operatorJwt = await encodeOperator('k8s-inventory-tests', operator, {
    system_account: system.getPublicKey(),
  });
  const systemJwt = await encodeAccount(
    'SYS',
    system,
    {},
    { signer: operator },
  );
  const accountJwt = await encodeAccount(
    'inventory',
    account,
    { limits: UNLIMITED },
    { signer: operator },
  );
  return {
    operator: {
      jwt: operatorJwt,
      systemAccount: system.getPublicKey(),
      accounts: {
        [system.getPublicKey()]: systemJwt,
        [account.getPublicKey()]: accountJwt,
      },
    },
    async userCreds(name) {
      const user = createUser();
      const jwt = await encodeUser(name, user, account);
      return new TextDecoder().decode(fmtCreds(jwt, user));
    },
  };
}
