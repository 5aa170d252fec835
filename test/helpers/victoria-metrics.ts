/**
 * A real VictoriaMetrics per test file, on a free port on 127.0.0.1 with its
 * data in a temp folder removed on stop, and a way to import samples in the
 * Prometheus text format (timestamps in ms) and make them readable.
 */
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type SpawnedVictoriaMetrics,
  spawnVictoriaMetrics,
} from '../../infra/local/victoria-metrics.ts';
import { importLine } from '../../shared/metrics/writer.ts';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** Unix ms. */
  time: number;
}

export interface TestVictoriaMetrics {
  url: string;
  server: SpawnedVictoriaMetrics;
  /** Imports samples and flushes, so the next query sees them. */
  importSamples(samples: readonly Sample[]): Promise<void>;
  stop(): Promise<void>;
}

export async function startVictoriaMetrics(): Promise<TestVictoriaMetrics> {
  const dir = await mkdtemp(join(tmpdir(), 'vm-test-'));
  const removeOnExit = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeOnExit);
  const server = await spawnVictoriaMetrics({ dataDir: dir });
  return {
    url: server.url,
    server,
    async importSamples(samples) {
      const response = await fetch(`${server.url}/api/v1/import/prometheus`, {
        method: 'POST',
        body: `${samples.map((s) => importLine(s, s.time)).join('\n')}\n`,
      });
      if (!response.ok) {
        throw new Error(
          `import refused: ${response.status} ${await response.text()}`,
        );
      }
      await server.flush();
    },
    async stop() {
      await server.stop();
      process.removeListener('exit', removeOnExit);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
