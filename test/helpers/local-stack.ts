/**
 * `npm start` (infra/local/main.ts) and the scripts as child processes, for
 * the tests that run the whole local stack: its output, its exit, and a
 * bounded wait that fails at once if the stack exits.
 */
import { type ChildProcess, spawn } from 'node:child_process';

// Node with tsx's loader, as `npm start` runs it: the tsx CLI would relay
// signals and SIGKILL a child that does not confirm one within 30 ms,
// which a busy machine misses.
const NODE_WITH_TSX = [process.execPath, '--import', 'tsx'] as const;

export interface Running {
  child: ChildProcess;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /**
   * A signal to the whole process group (detached runs only), SIGKILL by
   * default; SIGINT is a terminal's Ctrl-C.
   */
  killGroup(signal?: NodeJS.Signals): void;
}

/**
 * Runs `node --import tsx args` with `env`. `detached`: in a process group of its own,
 * so killGroup() kills it with everything it spawned (nats-server) at once.
 */
export function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  options: { detached?: boolean } = {},
): Running {
  const [node, ...loader] = NODE_WITH_TSX;
  const child = spawn(node, [...loader, ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  });
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString('utf8');
  });
  const exited = new Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
  }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return {
    child,
    output: () => out,
    exited,
    killGroup(signal = 'SIGKILL') {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, signal);
      } catch {
        // Already gone.
      }
    },
  };
}

export async function until<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs: number,
  running?: Running,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (running && running.child.exitCode !== null) {
      throw new Error(`exited while waiting for ${what}:\n${running.output()}`);
    }
    const value = await Promise.resolve(probe()).catch(() => undefined);
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(
    `timed out after ${timeoutMs} ms waiting for ${what}:\n${running?.output() ?? ''}`,
  );
}

/** The environment of a local stack on `port` with its own NATS and SQS/S3. */
export function localStackEnv(options: {
  databaseUrl: string;
  dataDir: string;
  port: number;
}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: options.databaseUrl,
    DATA_DIR: options.dataDir,
    PORT: String(options.port),
  };
  for (const name of [
    'NATS_URL',
    'NATS_CREDS',
    'NATS_CA',
    'NATS_SECRET',
    'SQS_ENDPOINT',
    'S3_ENDPOINT',
    'QUEUE_URL',
  ]) {
    delete env[name];
  }
  return env;
}

/** Starts the stack and waits for /healthz 200 and the banner's NATS URL. */
export async function startLocalStackProcess(
  env: NodeJS.ProcessEnv,
  options: { detached?: boolean } = {},
): Promise<{ stack: Running; natsUrl: string; health: number }> {
  const stack = run(['infra/local/main.ts'], env, options);
  const health = await until(
    '/healthz to answer 200',
    async () => {
      const res = await fetch(`http://127.0.0.1:${env.PORT}/healthz`);
      return res.status === 200 && res.status;
    },
    120_000,
    stack,
  );
  const natsUrl = await until(
    'the banner',
    () => /NATS\s+((?:nats|tls):\/\/\S+)/.exec(stack.output())?.[1],
    30_000,
    stack,
  );
  return { stack, natsUrl, health };
}
