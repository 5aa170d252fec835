/**
 * The local stack's metrics store. With METRICS_URL set, that store (and
 * METRICS_WRITE_URL, or its default). Without it, a VictoriaMetrics spawned
 * from the PATH with its data in DATA_DIR/victoria-metrics, on 8428 when
 * free; when `victoria-metrics` is not installed the stack still starts,
 * says how to install it, and the metrics route answers 503.
 */
import { join } from 'node:path';
import type { Config } from '../../shared/config.ts';
import {
  metricsStoreFromConfig,
  seriesWriterFromConfig,
} from '../../shared/metrics/from-config.ts';
import type { MetricsStore } from '../../shared/metrics/store.ts';
import type { SeriesWriter } from '../../shared/metrics/writer.ts';
import {
  spawnVictoriaMetrics,
  VICTORIA_METRICS_INSTALL_HINT,
  VictoriaMetricsStartError,
} from './victoria-metrics.ts';

export const DEFAULT_VICTORIA_METRICS_PORT = 8428;

export interface LocalMetrics {
  /** The query API's base, when there is a store. */
  url: string | undefined;
  store: MetricsStore | undefined;
  writer: SeriesWriter | undefined;
  stop(): Promise<void>;
}

export async function startLocalMetrics(
  config: Config,
  dataDir: string,
  say: (line: string) => void,
  isPortFree: (port: number) => Promise<boolean>,
): Promise<LocalMetrics> {
  if (
    config.METRICS_URL !== undefined ||
    config.METRICS_WRITE_URL !== undefined
  ) {
    return {
      url: config.METRICS_URL,
      store: metricsStoreFromConfig(config),
      writer: seriesWriterFromConfig(config),
      stop: async () => {},
    };
  }
  const port = (await isPortFree(DEFAULT_VICTORIA_METRICS_PORT))
    ? DEFAULT_VICTORIA_METRICS_PORT
    : 0;
  try {
    const server = await spawnVictoriaMetrics({
      dataDir: join(dataDir, 'victoria-metrics'),
      port,
      retentionPeriod: '31d',
    });
    say(`victoria-metrics on ${server.url}`);
    const local = { ...config, METRICS_URL: server.url };
    return {
      url: server.url,
      store: metricsStoreFromConfig(local),
      writer: seriesWriterFromConfig(local),
      stop: () => server.stop(),
    };
  } catch (error) {
    if (
      error instanceof VictoriaMetricsStartError &&
      /not found on PATH/.test(error.message)
    ) {
      say(
        `victoria-metrics is not installed (${VICTORIA_METRICS_INSTALL_HINT}, or set METRICS_URL): the metrics route answers 503 until then`,
      );
      return {
        url: undefined,
        store: undefined,
        writer: undefined,
        stop: async () => {},
      };
    }
    throw error;
  }
}
