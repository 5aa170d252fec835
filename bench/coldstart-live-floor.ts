/**
 * The live reads' floor (bench/coldstart.ts): the least a live read's cold
 * start can do. The floor's `select 1` (bench/coldstart-floor.ts) and, side
 * by side with it as the live reads do, one kube_query to the cluster's
 * agent over the connection a live read opens (the NATS client the
 * functions bundle, TLS trusting the server's own authority, a `.creds`
 * login signed through node:crypto: BUNDLE_ALIAS), its reply parsed as
 * JSON. Like the floor it takes its logins from the environment (no secret
 * read), and none of the project's code runs: no middy, no Powertools, no
 * access checks, no audit row. What a live read takes beyond this is what
 * the project's code and libraries add to it; what this takes beyond the
 * floor is the agent's round trip itself.
 */
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
} from '@nats-io/transport-node';
import { handler as selectOne } from './coldstart-floor.ts';

let nats: Promise<NatsConnection> | undefined;

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

export const handler = async (): Promise<unknown> => {
  nats ??= connect({
    servers: required('FLOOR_NATS_URL'),
    authenticator: credsAuthenticator(
      new TextEncoder().encode(required('FLOOR_NATS_CREDS')),
    ),
    tls: { ca: required('FLOOR_NATS_CA') },
  });
  const [row, reply] = await Promise.all([
    selectOne(),
    nats.then((nc) =>
      nc.request(required('FLOOR_NATS_SUBJECT'), required('FLOOR_KUBE_QUERY'), {
        timeout: 5_000,
      }),
    ),
  ]);
  const { ok } = JSON.parse(reply.string()) as { ok: boolean };
  return { ...(row as object), ok };
};
