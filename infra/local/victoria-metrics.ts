/**
 * Spawns a single-node VictoriaMetrics (Debian's `victoria-metrics`) on
 * 127.0.0.1, for the local stack and the tests. It runs with
 * `-search.latencyOffset=0s` (otherwise the newest 30 s of samples are
 * hidden from queries) and without its response cache, so a sample is
 * readable as soon as it is flushed (`flush()`, VictoriaMetrics'
 * `/internal/force_flush`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import {
  freePort,
  isNotFound,
  supervise,
} from '../../shared/process/supervise.ts';

export interface SpawnVictoriaMetricsOptions {
  /** The storage folder (created when missing). */
  dataDir: string;
  /** 0 picks a free port. */
  port?: number;
  /** VictoriaMetrics' syntax: `1d`, `12` (months), `100y`. */
  retentionPeriod?: string;
  command?: string;
  startTimeoutMs?: number;
}

export interface SpawnedVictoriaMetrics {
  /** The Prometheus query API's base (`<url>/api/v1/query_range`). */
  url: string;
  port: number;
  pid: number;
  /** Makes every accepted sample readable now. */
  flush(): Promise<void>;
  stop(): Promise<void>;
}

export class VictoriaMetricsStartError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'VictoriaMetricsStartError';
  }
}

export const VICTORIA_METRICS_INSTALL_HINT =
  'apt-get install -y victoria-metrics';

/** Another process may take a free port between the check and the bind. */
const PORT_ATTEMPTS = 3;

export async function spawnVictoriaMetrics(
  options: SpawnVictoriaMetricsOptions,
): Promise<SpawnedVictoriaMetrics> {
  await mkdir(options.dataDir, { recursive: true });
  let lastError: unknown;
  for (let attempt = 0; attempt < PORT_ATTEMPTS; attempt++) {
    const port = options.port || (await freePort());
    try {
      return await spawnOnPort(options, port);
    } catch (error) {
      lastError = error;
      const inUse = /address already in use/i.test((error as Error).message);
      if (!inUse || options.port) throw error;
    }
  }
  throw lastError;
}

async function spawnOnPort(
  options: SpawnVictoriaMetricsOptions,
  port: number,
): Promise<SpawnedVictoriaMetrics> {
  const command = options.command ?? 'victoria-metrics';
  const child = spawn(
    command,
    [
      `-storageDataPath=${options.dataDir}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      `-retentionPeriod=${options.retentionPeriod ?? '100y'}`,
      '-search.latencyOffset=0s',
      '-search.disableCache',
      '-loggerLevel=ERROR',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const { exited, logTail, stop } = supervise(child);
  const url = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      waitUntilHealthy(child, url, options.startTimeoutMs ?? 15_000),
      exited.then(({ code, error }) => {
        if (isNotFound(error)) {
          throw new VictoriaMetricsStartError(
            `${command} not found on PATH: ${VICTORIA_METRICS_INSTALL_HINT}`,
            { cause: error },
          );
        }
        throw new VictoriaMetricsStartError(
          `victoria-metrics exited (code ${code}) before serving:\n${logTail()}`,
          { cause: error },
        );
      }),
    ]);
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url,
    port,
    pid: child.pid ?? -1,
    async flush() {
      const response = await fetch(`${url}/internal/force_flush`);
      await response.arrayBuffer();
    },
    stop,
  };
}

async function waitUntilHealthy(
  child: ChildProcess,
  url: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error('victoria-metrics exited');
    }
    try {
      const response = await fetch(`${url}/health`, {
        signal: AbortSignal.timeout(1_000),
      });
      if (response.ok) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new VictoriaMetricsStartError(
    `victoria-metrics did not answer /health within ${timeoutMs} ms`,
  );
}
