/**
 * A real nats-server per suite (the nats.js way), with JetStream and the
 * local stack's 8 MB `max_payload`, in a temp dir removed on stop; with
 * `creds`, in operator mode as production's server runs, every client
 * logging in with a user's `.creds`; with `tls`, requiring TLS with a
 * certificate an authority made for the run issued, as a private CA issues
 * a server's.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnNatsServer } from '../../infra/local/nats-server.ts';
import { type NatsAccounts, natsAccounts } from './nats-creds.ts';
import { makeCertificate } from './tls-certificate.ts';

export interface TestNatsServer {
  url: string;
  /** With `tls`: PEM of the authority the server's certificate chains to, and its file. */
  ca?: { pem: string; file: string };
  /** With `creds`: a new user's `.creds` content; else undefined. */
  userCreds(name: string): Promise<string | undefined>;
  stop(): Promise<void>;
}

export interface TestNatsOptions {
  /** Operator mode: a client must log in with a user's `.creds`. */
  creds?: boolean;
  /** Clients must speak TLS; the certificate chains to the run's own authority. */
  tls?: boolean;
  /** The server's `max_payload`, in its own syntax (`16KB`); else the local stack's. */
  maxPayload?: string;
}

/**
 * Starts `nats-server` from PATH on a free port. Throws naming
 * `apt-get install nats-server` when it is not installed.
 */
export async function startNatsServer(
  options: TestNatsOptions = {},
): Promise<TestNatsServer> {
  const accounts: NatsAccounts | undefined = options.creds
    ? await natsAccounts()
    : undefined;
  const dir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  // The server itself is killed on exit by spawnNatsServer; the dir here.
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  try {
    const certificate = options.tls ? makeCertificate(dir) : undefined;
    const server = await spawnNatsServer({
      dataDir: dir,
      port: 0,
      ...(options.maxPayload ? { maxPayload: options.maxPayload } : {}),
      ...(accounts ? { operator: accounts.operator } : {}),
      ...(certificate
        ? {
            tls: {
              certFile: certificate.certFile,
              keyFile: certificate.keyFile,
            },
          }
        : {}),
    });
    return {
      // tls:// as a TLS server's address is written (nats.js takes either).
      url: certificate ? server.url.replace(/^nats:/, 'tls:') : server.url,
      ...(certificate
        ? {
            ca: {
              pem: await readFile(certificate.caFile, 'utf8'),
              file: certificate.caFile,
            },
          }
        : {}),
      userCreds: async (name) => accounts?.userCreds(name),
      async stop() {
        await server.stop();
        process.removeListener('exit', removeOnExit);
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    process.removeListener('exit', removeOnExit);
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
