/**
 * The metrics store and the series writer the configuration describes, or
 * undefined when it describes none (the metrics route then answers 503;
 * syncs write no series).
 *
 * - METRICS_URL: the query API's base, tenant path included.
 * - METRICS_WRITE_URL: where series are written; by default METRICS_URL's
 *   `/api/v1/write` (remote write) or `/api/v1/import/prometheus`
 *   (METRICS_WRITE_FORMAT=vm_import).
 * - METRICS_TENANT_HEADER (`Name: value`) and METRICS_SIGV4_REGION (AMP)
 *   apply to both.
 */
import type { Config } from '../config.ts';
import {
  type EnvironmentCredentials,
  type MetricsHttp,
  metricsHttp,
} from './http.ts';
import { type MetricsStore, prometheusStore } from './store.ts';
import { type SeriesWriter, seriesWriter } from './writer.ts';

type MetricsConfig = Pick<
  Config,
  | 'METRICS_URL'
  | 'METRICS_WRITE_URL'
  | 'METRICS_WRITE_FORMAT'
  | 'METRICS_TENANT_HEADER'
  | 'METRICS_SIGV4_REGION'
  | 'METRICS_QUERY_TIMEOUT_MS'
  | 'METRICS_WRITE_TIMEOUT_MS'
  | 'AWS_ACCESS_KEY_ID'
  | 'AWS_SECRET_ACCESS_KEY'
  | 'AWS_SESSION_TOKEN'
>;

const DEFAULT_WRITE_PATH = {
  remote_write: '/api/v1/write',
  vm_import: '/api/v1/import/prometheus',
} as const;

function httpOf(config: MetricsConfig): MetricsHttp {
  const header = config.METRICS_TENANT_HEADER;
  const colon = header?.indexOf(':') ?? -1;
  return metricsHttp({
    tenantHeader:
      header === undefined
        ? undefined
        : {
            name: header.slice(0, colon),
            value: header.slice(colon + 1).trim(),
          },
    sigv4Region: config.METRICS_SIGV4_REGION,
    credentials: environmentCredentials(config),
  });
}

/** The environment's credentials, when it holds a key pair. */
function environmentCredentials(
  config: MetricsConfig,
): EnvironmentCredentials | undefined {
  const { AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY } = config;
  if (AWS_ACCESS_KEY_ID === undefined || AWS_SECRET_ACCESS_KEY === undefined) {
    return undefined;
  }
  return {
    accessKeyId: AWS_ACCESS_KEY_ID,
    secretAccessKey: AWS_SECRET_ACCESS_KEY,
    sessionToken: config.AWS_SESSION_TOKEN,
  };
}

export function metricsStoreFromConfig(
  config: MetricsConfig,
): MetricsStore | undefined {
  if (config.METRICS_URL === undefined) return undefined;
  return prometheusStore({
    baseUrl: config.METRICS_URL,
    http: httpOf(config),
    timeoutMs: config.METRICS_QUERY_TIMEOUT_MS,
  });
}

/** The write endpoint: METRICS_WRITE_URL, else derived from METRICS_URL. */
export function writeUrlOf(config: MetricsConfig): string | undefined {
  if (config.METRICS_WRITE_URL !== undefined) return config.METRICS_WRITE_URL;
  if (config.METRICS_URL === undefined) return undefined;
  const base = config.METRICS_URL.replace(/\/+$/, '');
  return `${base}${DEFAULT_WRITE_PATH[config.METRICS_WRITE_FORMAT]}`;
}

export function seriesWriterFromConfig(
  config: MetricsConfig,
): SeriesWriter | undefined {
  const url = writeUrlOf(config);
  if (url === undefined) return undefined;
  return seriesWriter({
    url,
    format: config.METRICS_WRITE_FORMAT,
    http: httpOf(config),
    timeoutMs: config.METRICS_WRITE_TIMEOUT_MS,
  });
}
