/**
 * Runs a bundled Lambda function the way the Lambda runtime does: in a
 * process of its own, on the Node.js major of the function's runtime
 * (scripts/node22: `nodejs22.x`), with only the environment given (the
 * template's variables plus those Lambda itself sets; nothing of the test
 * process's), loading `index.js` once and then invoking the handler as
 * often as asked.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Duplex } from 'node:stream';
import { fromRoot } from '../../infra/paths.ts';
import { onJsonLines, writeJsonLine } from './json-lines.mjs';
import type { BundledFunction } from './lambda-bundles.ts';

const TOOLS = fromRoot('scripts/node22');

/** The Lambda runtime's Node major, as its template names it. */
export function runtimeMajor(runtime: string): number {
  const match = /^nodejs(\d+)\.x$/.exec(runtime);
  if (!match) throw new Error(`not a Node.js runtime: ${runtime}`);
  return Number(match[1]);
}

/**
 * The pinned Node 22 binary (scripts/node22/package.json): installed there by
 * `.ci/run`, or here on first use, from the npm registry.
 */
export function lambdaNodeBinary(): string {
  const bin = join(TOOLS, 'node_modules', '.bin', 'node');
  if (!existsSync(bin)) {
    const install = spawnSync(
      'npm',
      ['ci', '--no-audit', '--no-fund', '--prefix', TOOLS],
      { encoding: 'utf8', timeout: 300_000 },
    );
    if (install.status !== 0 || !existsSync(bin)) {
      throw new Error(
        `could not install the Lambda runtime's Node into scripts/node22 (npm ci --prefix scripts/node22): ${install.stderr}`,
      );
    }
  }
  return bin;
}

/** The execution role's session token as the functions get it (made up). */
export const SESSION_TOKEN = 'example-session-token';

/** The variables Lambda sets in every function's environment. */
export function lambdaReservedEnvironment(
  fn: BundledFunction,
  region: string,
): Record<string, string> {
  return {
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${fn.name}`,
    AWS_LAMBDA_LOG_STREAM_NAME: '2026/01/01/[$LATEST]0123456789abcdef',
    // The execution role's credentials (made up: every AWS endpoint a
    // function calls is a local stand-in).
    AWS_ACCESS_KEY_ID: 'ASIAEXAMPLEEXAMPLE00',
    AWS_SECRET_ACCESS_KEY: 'example-secret-access-key',
    AWS_SESSION_TOKEN: SESSION_TOKEN,
    // X-Ray segments go to a daemon that is not there, over UDP.
    AWS_XRAY_DAEMON_ADDRESS: '127.0.0.1:2000',
    AWS_XRAY_CONTEXT_MISSING: 'LOG_ERROR',
    LAMBDA_TASK_ROOT: fn.dir,
    _HANDLER: fn.handler,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    PATH: '/usr/local/bin:/usr/bin:/bin',
  };
}

export interface Answer {
  /** What the handler returned (JSON round-tripped), or undefined when it threw. */
  result?: unknown;
  error?: { name: string; message: string; stack?: string };
  /** Milliseconds from the process's start to the answer. */
  at: number;
  /** The process's CPU time (user + system) by the answer, in ms. */
  cpuMs: number;
}

/** When the module was loaded: as Answer's `at` and `cpuMs`. */
export interface Loaded {
  at: number;
  cpuMs: number;
}

export interface LambdaProcess {
  /** Milliseconds from the process's start to the module's import done. */
  readonly ready: Promise<number>;
  /** The same moment with the CPU time spent by then. */
  readonly loaded: Promise<Loaded>;
  invoke(event: unknown, timeoutMs?: number): Promise<Answer>;
  /** What the function wrote (its log lines), stdout and stderr. */
  output(): string;
  stop(): Promise<void>;
}

type Message =
  | { type: 'ready'; at: number; cpuMs: number }
  | { type: 'init-error'; error: { name: string; message: string } }
  | { type: 'result'; id: string; at: number; cpuMs: number; result: unknown }
  | {
      type: 'error';
      id: string;
      at: number;
      cpuMs: number;
      error: { name: string; message: string; stack?: string };
    };

/**
 * The options the runtime's bootstrap (`/var/runtime/bootstrap`) starts Node
 * with: the heap sized from the function's memory (a tenth of it for the
 * young generation, two semi-spaces; the rest for the old one), the GC
 * exposed, and the larger header limit.
 */
export function bootstrapNodeOptions(memorySize: number): string[] {
  const newSpace = Math.floor(memorySize / 10);
  return [
    '--expose-gc',
    '--max-http-header-size',
    '81920',
    `--max-semi-space-size=${Math.floor(newSpace / 2)}`,
    `--max-old-space-size=${memorySize - newSpace}`,
  ];
}

/** An X-Ray trace header, unsampled, as the Runtime API hands one over. */
function traceIdHeader(): string {
  const hex = (length: number) =>
    randomUUID().replaceAll('-', '').slice(0, length);
  const epoch = Math.floor(Date.now() / 1000).toString(16);
  return `Root=1-${epoch}-${hex(24)};Parent=${hex(16)};Sampled=0`;
}

/**
 * Starts `fn`'s bundle on `node` with exactly `environment`. With
 * `cpuProfileDir`, the runtime's stand-in writes V8's CPU profiles of the
 * module's load and of the first invocation there (lambda-runtime.mjs).
 */
export function startLambda(
  fn: BundledFunction,
  environment: Record<string, string>,
  node: string = lambdaNodeBinary(),
  options: { cpuProfileDir?: string } = {},
): LambdaProcess {
  const child: ChildProcess = spawn(
    node,
    [
      ...bootstrapNodeOptions(fn.memorySize),
      fromRoot('test/helpers/lambda-runtime.mjs'),
      fn.dir,
      fn.handler,
      ...(options.cpuProfileDir === undefined ? [] : [options.cpuProfileDir]),
    ],
    {
      cwd: fn.dir,
      env: environment,
      // fd 3: the runtime's channel (lambda-runtime.mjs), JSON lines.
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const pending = new Map<string, (answer: Answer) => void>();
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => resolve()),
  );
  const channel = child.stdio[3] as Duplex;
  // The process's exit settles what waits; a reset pipe says nothing more.
  channel.on('error', () => {});
  const send = (message: unknown) => writeJsonLine(channel, message);
  const loaded = new Promise<Loaded>((resolve, reject) => {
    onJsonLines<Message>(channel, (message) => {
      if (message.type === 'ready')
        resolve({ at: message.at, cpuMs: message.cpuMs });
      else if (message.type === 'init-error') {
        reject(
          new Error(
            `${fn.name}: the module failed to load: ${message.error.name}: ${message.error.message}\n${output}`,
          ),
        );
      } else {
        const answer: Answer =
          message.type === 'result'
            ? { result: message.result, at: message.at, cpuMs: message.cpuMs }
            : { error: message.error, at: message.at, cpuMs: message.cpuMs };
        pending.get(message.id)?.(answer);
        pending.delete(message.id);
      }
    });
    child.once('exit', (code) => {
      reject(
        new Error(
          `${fn.name}: exited (${code}) before it was ready\n${output}`,
        ),
      );
      for (const [, settle] of pending) {
        settle({
          error: { name: 'Exit', message: `the process exited (${code})` },
          at: Number.NaN,
          cpuMs: Number.NaN,
        });
      }
      pending.clear();
    });
  });
  const ready = loaded.then((l) => l.at);
  // An init failure is reported by `ready`'s awaiter; never unhandled.
  ready.catch(() => {});
  loaded.catch(() => {});
  return {
    ready,
    loaded,
    async invoke(event, timeoutMs = fn.timeoutSeconds * 1000) {
      await ready;
      const id = randomUUID();
      return new Promise<Answer>((resolve) => {
        pending.set(id, resolve);
        send({
          id,
          requestId: randomUUID(),
          traceId: traceIdHeader(),
          event,
          timeoutMs,
        });
      });
    },
    output: () => output,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}
