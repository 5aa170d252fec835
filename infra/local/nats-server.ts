/**
 * Spawns a local `nats-server` with JetStream, for the local stack and the
 * integration tests. Debian's nats-server (2.9.x) has no flag for
 * `max_payload`, so the server always runs from a generated config file; an
 * inventory is several MB, so the default 1 MiB would refuse real snapshots.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { isNotFound, supervise } from '../../shared/process/supervise.ts';

export interface SpawnNatsServerOptions {
  /** Holds the config file, the JetStream store and the ports file. */
  dataDir: string;
  /** Client port; 0 lets the server pick a free one (read back, no race). */
  port: number;
  /** Interface to listen on; loopback unless told otherwise. */
  host?: string;
  /** The server's `max_payload`, in its own syntax. */
  maxPayload?: string;
  /** The executable; looked up on PATH. */
  command?: string;
  /** How long to wait for the server to accept connections. */
  startTimeoutMs?: number;
  /**
   * Decentralized authentication, as a production server runs it: the
   * operator's JWT and each account's (public key → JWT), preloaded in
   * memory. Clients must then log in with a user's `.creds`.
   */
  operator?: NatsOperatorAuth;
  /**
   * Clients must speak TLS, with this certificate (PEM files); the INFO
   * line still comes first in the clear, as NATS's protocol has it.
   */
  tls?: { certFile: string; keyFile: string };
}

export interface NatsOperatorAuth {
  jwt: string;
  /** The server's own account (JetStream needs one), among `accounts`. */
  systemAccount: string;
  accounts: Record<string, string>;
}

export interface SpawnedNatsServer {
  url: string;
  port: number;
  pid: number;
  /** Terminates the server (SIGTERM, then SIGKILL) and waits for its exit. */
  stop(): Promise<void>;
}

export class NatsServerStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NatsServerStartError';
  }
}

const DEFAULT_MAX_PAYLOAD = '8MB';
const DEFAULT_START_TIMEOUT_MS = 15_000;
/**
 * Starts `nats-server` with a generated config (`port`, `max_payload`,
 * JetStream under `dataDir`) and resolves once it answers with its INFO line.
 * The child is killed when this process exits, so a crashed test run or an
 * interrupted local stack never leaves a server behind.
 */
export async function spawnNatsServer(
  options: SpawnNatsServerOptions,
): Promise<SpawnedNatsServer> {
  const host = options.host ?? '127.0.0.1';
  const command = options.command ?? 'nats-server';
  const timeoutMs = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  const portsDir = join(options.dataDir, 'ports');
  const storeDir = join(options.dataDir, 'jetstream');
  await mkdir(portsDir, { recursive: true });
  await mkdir(storeDir, { recursive: true });

  const configPath = join(options.dataDir, 'nats-server.conf');
  // -1 is nats-server's own "pick a free port"; the ports file tells us which.
  const port = options.port === 0 ? -1 : options.port;
  const config = [
    `host: ${JSON.stringify(host)}`,
    `port: ${port}`,
    `max_payload: ${options.maxPayload ?? DEFAULT_MAX_PAYLOAD}`,
    `ports_file_dir: ${JSON.stringify(portsDir)}`,
    `jetstream {`,
    `  store_dir: ${JSON.stringify(storeDir)}`,
    `}`,
    ...(options.operator ? operatorConfig(options.operator) : []),
    ...(options.tls
      ? [
          'tls {',
          `  cert_file: ${JSON.stringify(options.tls.certFile)}`,
          `  key_file: ${JSON.stringify(options.tls.keyFile)}`,
          '}',
        ]
      : []),
    '',
  ].join('\n');
  await writeFile(configPath, config);

  const child = spawn(command, ['-c', configPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { exited, logTail, stop } = supervise(child);

  try {
    const actualPort = await Promise.race([
      waitUntilServing(child, portsDir, host, timeoutMs),
      exited.then(({ code, error }) => {
        if (isNotFound(error)) {
          throw new NatsServerStartError(
            `${command} not found on PATH: apt-get install nats-server`,
            { cause: error },
          );
        }
        throw new NatsServerStartError(
          `nats-server exited (code ${code}) before serving:\n${logTail()}`,
          { cause: error },
        );
      }),
    ]);
    return {
      url: `nats://${host}:${actualPort}`,
      port: actualPort,
      pid: child.pid ?? -1,
      stop,
    };
  } catch (error) {
    await stop();
    if (error instanceof NatsServerStartError) throw error;
    throw new NatsServerStartError(
      `nats-server did not start: ${(error as Error).message}\n${logTail()}`,
      { cause: error },
    );
  }
}

function operatorConfig(auth: NatsOperatorAuth): string[] {
  return [
    `operator: ${JSON.stringify(auth.jwt)}`,
    `system_account: ${JSON.stringify(auth.systemAccount)}`,
    'resolver: MEMORY',
    'resolver_preload: {',
    ...Object.entries(auth.accounts).map(
      ([account, jwt]) =>
        `  ${JSON.stringify(account)}: ${JSON.stringify(jwt)}`,
    ),
    '}',
  ];
}

async function waitUntilServing(
  child: ChildProcess,
  portsDir: string,
  host: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      // The exit branch of the race has already reported why.
      throw new Error('nats-server exited');
    }
    // The ports file names our pid, so another server already on a fixed
    // port is never mistaken for this one.
    const actual = await readPortsFile(portsDir, child.pid);
    if (actual !== undefined && (await answersInfo(host, actual))) {
      return actual;
    }
    await delay(50);
  }
  throw new Error(`no client connection accepted within ${timeoutMs} ms`);
}

/** The ports file is `<executable>_<pid>.ports`: {"nats": ["nats://h:p"]}. */
async function readPortsFile(
  dir: string,
  pid: number | undefined,
): Promise<number | undefined> {
  if (pid === undefined) return undefined;
  const name = (await readdir(dir)).find((f) => f.endsWith(`_${pid}.ports`));
  if (name === undefined) return undefined;
  try {
    const ports = JSON.parse(await readFile(join(dir, name), 'utf8')) as {
      nats?: string[];
    };
    const url = ports.nats?.[0];
    return url === undefined ? undefined : Number(new URL(url).port);
  } catch {
    // Read while being written; the next poll sees it whole.
    return undefined;
  }
}

/** True once the server sends its INFO greeting on a fresh connection. */
function answersInfo(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect({ host, port });
    let seen = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1_000, () => done(false));
    socket.on('error', () => done(false));
    socket.on('data', (chunk) => {
      seen += chunk.toString('latin1');
      if (seen.startsWith('INFO ')) done(true);
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
