/**
 * What every server the local stack and the tests spawn needs around its
 * child process: the tail of its output for a start error, a kill if this
 * process exits first (no orphaned servers), and a stop that asks politely
 * before it kills.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

const STOP_GRACE_MS = 5_000;
const LOG_TAIL_CHARS = 4_000;

export interface SupervisedChild {
  /** Settles once the child exits, or fails to start (`error`). */
  exited: Promise<{ code: number | null; error?: Error }>;
  /** The last few thousand characters the child wrote. */
  logTail(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(): Promise<void>;
}

export function supervise(child: ChildProcess): SupervisedChild {
  let tail = '';
  const keepLog = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-LOG_TAIL_CHARS);
  };
  child.stdout?.on('data', keepLog);
  child.stderr?.on('data', keepLog);
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<{ code: number | null; error?: Error }>(
    (resolve) => {
      child.once('error', (error) => resolve({ code: null, error }));
      child.once('exit', (code) => resolve({ code }));
    },
  );
  return {
    exited,
    logTail: () => tail,
    async stop() {
      process.removeListener('exit', killOnExit);
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** True when spawning failed because the command is not installed. */
export function isNotFound(error: Error | undefined): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

/** A TCP port on 127.0.0.1 that was free a moment ago. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
