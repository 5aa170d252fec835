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
 *   answer an empty result and 204;
 * - RDS Proxy: a TLS endpoint in front of the local PostgreSQL with a
 *   certificate made for the run, so `sslmode=verify-full` and
 *   NODE_EXTRA_CA_CERTS are exercised as in AWS; a client that does not ask
 *   for TLS is refused (the proxy's `requireTLS`).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, TLSSocket } from 'node:tls';

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

export interface TlsProxy {
  host: string;
  port: number;
  /** PEM of the certificate authority the proxy's certificate chains to. */
  caFile: string;
  stop(): Promise<void>;
}

/** PostgreSQL's SSLRequest: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f]);

/** A certificate for localhost and 127.0.0.1, self-signed, for one run. */
function makeCertificate(dir: string): { key: string; cert: string } {
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  return { key: readFileSync(keyFile, 'utf8'), cert: certFile };
}

/** Terminates TLS on a free loopback port and forwards to `upstream`. */
export async function startTlsProxy(upstream: {
  host: string;
  port: number;
}): Promise<TlsProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-inventory-proxy-'));
  const { key, cert } = makeCertificate(dir);
  const context = createSecureContext({ key, cert: readFileSync(cert) });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.once('data', (first: Buffer) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        socket.destroy();
        return;
      }
      socket.write('S');
      const secure = new TLSSocket(socket, {
        isServer: true,
        secureContext: context,
      });
      const backend = connect(upstream.port, upstream.host);
      sockets.add(backend);
      backend.on('close', () => sockets.delete(backend));
      secure.pipe(backend).pipe(secure);
      const close = () => {
        secure.destroy();
        backend.destroy();
      };
      secure.on('error', close);
      backend.on('error', close);
      secure.on('close', close);
      backend.on('close', close);
    });
  });
  const port = await listen(server);
  return {
    host: 'localhost',
    port,
    caFile: cert,
    stop: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
