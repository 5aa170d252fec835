/**
 * Loopback stand-ins for the AWS endpoints a bundled function reaches that
 * the queue emulator (fauxqs) does not serve:
 *
 * - Secrets Manager's GetSecretValue (the JSON 1.1 protocol the SDK speaks:
 *   `POST /`, `X-Amz-Target: secretsmanager.GetSecretValue`), reached
 *   through the SDK's own `AWS_ENDPOINT_URL_SECRETS_MANAGER`;
 * - the AWS Parameters and Secrets Lambda Extension's
 *   `GET /secretsmanager/get?secretId=` on the same secrets, refused (401)
 *   without the session token in `X-Aws-Parameters-Secrets-Token`, reached
 *   through PARAMETERS_SECRETS_EXTENSION_HTTP_PORT;
 * - the managed Prometheus workspace's query and remote-write paths, which
 *   answer an empty result and 204.
 *
 * RDS Proxy's stand-in is test/helpers/rds-proxy.ts.
 */
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:net';

export interface AwsRequest {
  /** `secretsmanager.GetSecretValue` (SDK), `extension:secretsmanager/get`, or empty. */
  target: string;
  path: string;
  /** The SecretId asked for, for Secrets Manager. */
  secretId?: string;
  /** Whether it carried a SigV4 Authorization header. */
  signed: boolean;
}

export interface AwsStandIn {
  /** `http://127.0.0.1:{port}`. */
  endpoint: string;
  port: number;
  /** Every request, in order. */
  requests: AwsRequest[];
  stop(): Promise<void>;
}

function listen(
  server: Server | ReturnType<typeof createHttpServer>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
}

/**
 * Secrets Manager and the Prometheus workspace. `secrets` maps an id (ARN
 * or name, as a function asks) to the secret's string.
 */
export async function startAwsStandIn(
  secrets: ReadonlyMap<string, string>,
  /** The session token the extension requires (the functions' AWS_SESSION_TOKEN). */
  sessionToken: string,
): Promise<AwsStandIn> {
  /** GetSecretValue's answer for `id`, as the SDK and the extension give it. */
  const secretValue = (id: string, value: string) =>
    JSON.stringify({
      ARN: id.startsWith('arn:')
        ? id
        : `arn:aws:secretsmanager:us-east-1:123456789012:secret:${id}-AbCdEf`,
      Name: id,
      SecretString: value,
      VersionId: '00000000-0000-0000-0000-000000000001',
      VersionStages: ['AWSCURRENT'],
      CreatedDate: 1_700_000_000,
    });
  const requests: AwsRequest[] = [];
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const target = String(req.headers['x-amz-target'] ?? '');
      const signed = String(req.headers.authorization ?? '').startsWith(
        'AWS4-HMAC-SHA256 ',
      );
      const path = req.url ?? '/';
      const url = new URL(path, 'http://localhost');
      if (req.method === 'GET' && url.pathname === '/secretsmanager/get') {
        const secretId = url.searchParams.get('secretId') ?? '';
        requests.push({
          target: 'extension:secretsmanager/get',
          path,
          secretId,
          signed,
        });
        if (req.headers['x-aws-parameters-secrets-token'] !== sessionToken) {
          res.statusCode = 401;
          res.end('not authorized');
          return;
        }
        const value = secrets.get(secretId);
        if (value === undefined) {
          res.statusCode = 400;
          res.end(
            "ResourceNotFoundException: Secrets Manager can't find the specified secret.",
          );
          return;
        }
        res.setHeader('content-type', 'application/json');
        res.end(secretValue(secretId, value));
        return;
      }
      if (target === 'secretsmanager.GetSecretValue') {
        const { SecretId } = JSON.parse(Buffer.concat(chunks).toString()) as {
          SecretId: string;
        };
        requests.push({ target, path, secretId: SecretId, signed });
        const value = secrets.get(SecretId);
        res.setHeader('content-type', 'application/x-amz-json-1.1');
        if (value === undefined) {
          res.statusCode = 400;
          res.end(
            JSON.stringify({
              __type: 'ResourceNotFoundException',
              message: "Secrets Manager can't find the specified secret.",
            }),
          );
          return;
        }
        res.end(secretValue(SecretId, value));
        return;
      }
      requests.push({ target, path, signed });
      if (path.includes('/api/v1/remote_write')) {
        res.statusCode = 204;
        res.end();
        return;
      }
      if (path.includes('/api/v1/query')) {
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            status: 'success',
            data: { resultType: 'matrix', result: [] },
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end();
    });
  });
  const port = await listen(server);
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    requests,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
