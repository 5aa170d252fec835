/**
 * Where the bundled functions run outside AWS: the synthesized assembly,
 * the runtime's Node binary, and local stand-ins for every AWS endpoint a
 * function's template points it at:
 *
 * - PostgreSQL behind RDS Proxy's stand-in (test/helpers/rds-proxy.ts:
 *   `sslmode=verify-full` against this run's own CA, given as
 *   NODE_EXTRA_CA_CERTS; each login's backends pooled, as RDS Proxy pools);
 * - a login per group role (test/helpers/function-logins.ts), each read by
 *   its function from the Secrets Manager stand-in under the ARN the
 *   template gives, through the Parameters and Secrets extension's endpoint
 *   where the template gives the function the extension (its port swapped
 *   for the stand-in's), else with the SDK; the schema owner's secret for
 *   migrate;
 * - nats-server in operator mode, as production's asks every client for its
 *   `.creds`, and requiring TLS with a certificate of the run's own
 *   authority, as a server a private CA signed (the live reads' NATS secret
 *   holds its URL, an API user's creds and that authority, `{url, creds,
 *   ca}`, as in AWS; `nats.userCreds` makes an agent's, `nats.ca` is the
 *   authority's file and PEM), fauxqs for S3 (claim checks), a stub
 *   Prometheus workspace.
 *
 * `environmentOf` is the environment Lambda would give a function with
 * those endpoints swapped in; a value still naming AWS fails.
 */
import { randomUUID } from 'node:crypto';
import { APPLICATION_LOGINS } from '../../infra/stacks/database-stack.ts';
import type { Db } from '../../shared/db/pool.ts';
import type { GroupRoleName } from '../../shared/db/roles.ts';
import { type AwsStandIn, startAwsStandIn } from './aws-stand-ins.ts';
import {
  createFunctionLogins,
  type FunctionLogin,
  type FunctionLogins,
} from './function-logins.ts';
import {
  type Assembly,
  type BundledFunction,
  databaseSecrets,
  FAKE_ACCOUNT,
  readAssembly,
  resolvedEnvironment,
  type Stand,
  synthesizedAssembly,
} from './lambda-bundles.ts';
import {
  type LambdaProcess,
  lambdaNodeBinary,
  lambdaReservedEnvironment,
  SESSION_TOKEN,
  startLambda,
} from './lambda-process.ts';
import { startNatsServer, type TestNatsServer } from './nats.ts';
import { startTlsProxy, type TlsProxy } from './rds-proxy.ts';
import { startSqs, type TestSqs } from './sqs.ts';

export const REGION = 'us-east-1';
export const APP_PREFIX = 'k8s-inventory';
const NATS_SECRET_NAME = `${APP_PREFIX}/nats`;

export const stand: Stand = {
  region: REGION,
  account: FAKE_ACCOUNT,
  parameter: (_stack, name) =>
    name === 'JwtIssuer' ? 'https://issuer.example.test' : 'k8s-inventory-api',
};

/** The group role whose privileges a template's login username carries. */
function groupRoleOf(username: string): GroupRoleName | undefined {
  return Object.values(APPLICATION_LOGINS).find(
    (login) => login.username === username,
  )?.role;
}

/** A login's secret as RDS writes it. */
function secretString(username: string, password: string): string {
  return JSON.stringify({
    engine: 'postgres',
    host: 'instance.example',
    port: 5432,
    dbname: 'inventory',
    username,
    password,
  });
}

export interface EnvironmentOptions {
  /** Another database on the same server (migrate's empty one). */
  databaseName?: string;
  /** The deploy-time secrets: the logins under their template names. */
  deploySecrets?: boolean;
}

export interface LambdaStage {
  assembly: Assembly;
  node: string;
  logins: FunctionLogins;
  sqs: TestSqs;
  nats: TestNatsServer;
  proxy: TlsProxy;
  /** What every function but migrate reads: this run's logins. */
  secrets: AwsStandIn;
  /** What migrate reads: each login under the name its template gives it. */
  deploySecrets: AwsStandIn;
  fn(name: string): BundledFunction;
  loginFor(role: GroupRoleName): FunctionLogin;
  /** A URL of the database as `role`'s login, directly (not through the proxy). */
  urlAs(role: GroupRoleName): string;
  environmentOf(
    fn: BundledFunction,
    options?: EnvironmentOptions,
  ): Record<string, string>;
  /** Starts `fn` and waits for its module to load; stopped by `stop`. */
  start(
    fn: BundledFunction,
    options?: EnvironmentOptions,
  ): Promise<LambdaProcess>;
  /** Stops the functions and the stand-ins; the caller drops its database, then `logins.drop`. */
  stop(): Promise<void>;
}

/**
 * Sets the stage on the database at `url` (migrated, owned by its user):
 * its logins are made there, and the functions connect to it.
 */
export async function startLambdaStage(
  url: string,
  owner: Db,
): Promise<LambdaStage> {
  const assembly = readAssembly(await synthesizedAssembly());
  const node = lambdaNodeBinary();
  const logins = await createFunctionLogins(owner);
  const [sqs, nats] = await Promise.all([
    startSqs(),
    startNatsServer({ creds: true, tls: true }),
  ]);
  const upstream = new URL(url);
  const proxy = await startTlsProxy({
    host: upstream.hostname,
    port: Number(upstream.port || 5432),
  });
  const loginFor = (role: GroupRoleName): FunctionLogin => {
    const login = logins.byGroupRole.get(role);
    if (login === undefined) throw new Error(`no login for ${role}`);
    return login;
  };

  const runSecrets = new Map<string, string>([
    [
      NATS_SECRET_NAME,
      JSON.stringify({
        url: nats.url,
        creds: await nats.userCreds('api'),
        ca: nats.ca!.pem,
      }),
    ],
  ]);
  const templateSecrets = new Map<string, string>();
  for (const [arn, username] of databaseSecrets(assembly, stand)) {
    const role = groupRoleOf(username);
    if (role === undefined) {
      // The schema owner's secret (migrate): this server's owner.
      // A server under trust authentication takes any password; RDS's
      // secret always has one.
      const ownerSecret = secretString(
        decodeURIComponent(upstream.username),
        decodeURIComponent(upstream.password) || 'unused-under-trust',
      );
      runSecrets.set(arn, ownerSecret);
      templateSecrets.set(arn, ownerSecret);
      continue;
    }
    const login = loginFor(role);
    runSecrets.set(arn, secretString(login.username, login.password));
    templateSecrets.set(arn, secretString(username, randomUUID()));
  }
  const [secrets, deploySecrets] = await Promise.all([
    startAwsStandIn(runSecrets, SESSION_TOKEN),
    startAwsStandIn(templateSecrets, SESSION_TOKEN),
  ]);

  const running: LambdaProcess[] = [];
  const environmentOf = (
    bundled: BundledFunction,
    options: EnvironmentOptions = {},
  ): Record<string, string> => {
    const env = resolvedEnvironment(assembly, bundled, stand);
    const secretsStandIn = options.deploySecrets ? deploySecrets : secrets;
    const swapped: Record<string, string> = {
      ...lambdaReservedEnvironment(bundled, REGION),
      ...env,
      AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsStandIn.endpoint,
    };
    if ('PARAMETERS_SECRETS_EXTENSION_HTTP_PORT' in env) {
      swapped.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT = String(
        secretsStandIn.port,
      );
    }
    if ('DATABASE_HOST' in env) {
      swapped.DATABASE_HOST = proxy.host;
      swapped.DATABASE_PORT = String(proxy.port);
      swapped.DATABASE_NAME =
        options.databaseName ?? upstream.pathname.slice(1);
    }
    if ('NODE_EXTRA_CA_CERTS' in env) {
      swapped.NODE_EXTRA_CA_CERTS = proxy.caFile;
    }
    for (const key of ['METRICS_URL', 'METRICS_WRITE_URL']) {
      const value = env[key];
      if (value !== undefined) {
        swapped[key] = `${secrets.endpoint}${new URL(value).pathname}`;
      }
    }
    if ('CLAIM_BUCKET' in env) {
      swapped.CLAIM_BUCKET = sqs.bucket;
      swapped.S3_ENDPOINT = sqs.endpoint;
    }
    for (const [key, value] of Object.entries(swapped)) {
      if (/amazonaws\.com|\.endpoint$|^\/var\/runtime/.test(value)) {
        throw new Error(
          `${bundled.name}: ${key} still points into AWS: ${value}`,
        );
      }
    }
    return swapped;
  };

  return {
    assembly,
    node,
    logins,
    sqs,
    nats,
    proxy,
    secrets,
    deploySecrets,
    fn(name) {
      const found = assembly.functions.find(
        (f) => f.name === `${APP_PREFIX}-${name}`,
      );
      if (found === undefined)
        throw new Error(`no function ${APP_PREFIX}-${name}`);
      return found;
    },
    loginFor,
    urlAs(role) {
      const { username, password } = loginFor(role);
      const as = new URL(url);
      as.username = username;
      as.password = password;
      return as.toString();
    },
    environmentOf,
    async start(bundled, options = {}) {
      const lambda = startLambda(
        bundled,
        environmentOf(bundled, options),
        node,
      );
      running.push(lambda);
      await lambda.ready;
      return lambda;
    },
    async stop() {
      await Promise.all(running.map((p) => p.stop()));
      await Promise.all([
        secrets.stop(),
        deploySecrets.stop(),
        proxy.stop(),
        sqs.stop(),
        nats.stop(),
      ]);
    },
  };
}
