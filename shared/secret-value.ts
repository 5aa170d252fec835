/**
 * A Secrets Manager secret's string, read once per cold start by whoever
 * needs it (the database login, the live reads' NATS secret).
 *
 * In a function with the AWS Parameters and Secrets Lambda Extension
 * (PARAMETERS_SECRETS_EXTENSION_HTTP_PORT set: infra/constructs/
 * service-function.ts) it is a GET to the extension on the loopback, with the
 * execution role's session token as the extension requires; the answer is
 * GetSecretValue's JSON. That keeps the SDK client (~140 ms to load on
 * Node 22) off the cold start; the role still needs
 * secretsmanager:GetSecretValue, which the extension uses. Elsewhere
 * (migrate, scripts, tests) the SDK reads it. Errors name the secret and
 * its use, never its value (docs/decisions.md, "Secrets through the
 * Parameters and Secrets extension").
 */
import type { Config } from './config.ts';
import { httpExchange } from './http-exchange.ts';

export class SecretReadError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SecretReadError';
  }
}

export type SecretReadConfig = Pick<
  Config,
  'AWS_REGION' | 'AWS_SESSION_TOKEN' | 'PARAMETERS_SECRETS_EXTENSION_HTTP_PORT'
>;

/** The SecretString of `id` (ARN or name); undefined for a binary secret. */
export async function readSecretString(
  config: SecretReadConfig,
  id: string,
): Promise<string | undefined> {
  const port = config.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT;
  if (port !== undefined) {
    return (await getFromExtension(port, config.AWS_SESSION_TOKEN ?? '', id))
      .SecretString;
  }
  // Loaded only where there is no extension: nothing of the SDK in Lambda.
  const { GetSecretValueCommand, SecretsManagerClient } = await import(
    '@aws-sdk/client-secrets-manager'
  );
  const client = new SecretsManagerClient({ region: config.AWS_REGION });
  try {
    const secret = await client.send(
      new GetSecretValueCommand({ SecretId: id }),
    );
    return secret.SecretString;
  } finally {
    client.destroy();
  }
}

/**
 * `GET /secretsmanager/get?secretId=` on the extension (over node:http:
 * shared/http-exchange.ts says why not fetch), at the IPv4 loopback address
 * it listens on rather than `localhost`: a name is looked up first, which
 * loads Node's resolver and starts libuv's thread pool for getaddrinfo,
 * about 5–9 ms of every cold start for an answer that cannot differ.
 */
async function getFromExtension(
  port: number,
  token: string,
  id: string,
): Promise<{ SecretString?: string }> {
  const answer = await httpExchange({
    url: new URL(
      `http://127.0.0.1:${port}/secretsmanager/get?secretId=${encodeURIComponent(id)}`,
    ),
    method: 'GET',
    headers: { 'X-Aws-Parameters-Secrets-Token': token },
    timeoutMs: 10_000,
  }).catch((error: unknown) => {
    throw new SecretReadError(
      `the Parameters and Secrets extension on port ${port} did not answer for ${id}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  });
  const body = { status: answer.status, text: answer.body.toString('utf8') };
  if (body.status !== 200) {
    // An error answer is the extension's (or Secrets Manager's) message,
    // never the value; kept short all the same.
    throw new SecretReadError(
      `the Parameters and Secrets extension answered ${body.status} for ${id}: ${body.text.slice(0, 300)}`,
    );
  }
  try {
    return JSON.parse(body.text) as { SecretString?: string };
  } catch {
    // The parser's message may quote the value: leave it out.
    throw new SecretReadError(
      `the Parameters and Secrets extension's answer for ${id} is not JSON`,
    );
  }
}
