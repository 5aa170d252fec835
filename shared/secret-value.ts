/**
 * A Secrets Manager secret's string, read once per cold start by whoever
 * needs it (the database login, the live reads' NATS secret).
 *
 * In a function with the AWS Parameters and Secrets Lambda Extension
 * (PARAMETERS_SECRETS_EXTENSION_HTTP_PORT set: infra/constructs/
 * service-function.ts) it is a GET to the extension on localhost, with the
 * execution role's session token as the extension requires; the answer is
 * GetSecretValue's JSON. That keeps the SDK client (~140 ms to load on
 * Node 22) off the cold start; the role still needs
 * secretsmanager:GetSecretValue, which the extension uses. Elsewhere
 * (migrate, scripts, tests) the SDK reads it. Errors name the secret and
 * its use, never its value (docs/decisions.md, "Secrets through the
 * Parameters and Secrets extension").
 */
import type { Config } from './config.ts';

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
 * `GET /secretsmanager/get?secretId=` on the extension, over node:http (the
 * Tracer's X-Ray patch has loaded it already; global fetch would load
 * undici). Taken with `process.getBuiltinModule`, not `import()`: the
 * bundles are CommonJS, but esbuild leaves `import('node:http')` an ESM
 * import, whose facade reads every export of the module, and its lazy
 * `fetch`-family getters load undici (~30 ms of the first answer's CPU).
 */
async function getFromExtension(
  port: number,
  token: string,
  id: string,
): Promise<{ SecretString?: string }> {
  const { request } = process.getBuiltinModule('node:http');
  const body = await new Promise<{ status: number; text: string }>(
    (resolve, reject) => {
      const req = request(
        {
          host: 'localhost',
          port,
          path: `/secretsmanager/get?secretId=${encodeURIComponent(id)}`,
          headers: { 'X-Aws-Parameters-Secrets-Token': token },
          timeout: 10_000,
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              text: Buffer.concat(chunks).toString('utf8'),
            }),
          );
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
      req.on('error', reject);
      req.end();
    },
  ).catch((error: unknown) => {
    throw new SecretReadError(
      `the Parameters and Secrets extension on port ${port} did not answer for ${id}: ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    );
  });
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
