/**
 * The sync worker's dependencies, one set per process (per Lambda instance):
 * the shared database pool and an S3 client from the configuration, created
 * on first use (the S3 client on the first claim check). The local stack, the tests and the benchmark give their own
 * with `setSyncDeps`, exactly as the API's `setDb`.
 */
import { type Config, getConfig } from '../config.ts';
import { getDb } from '../db/process-pool.ts';
import { seriesWrites } from '../metrics/after-sync.ts';
import { seriesWriterFromConfig } from '../metrics/from-config.ts';
import { traceSpan } from '../observability/tracer.ts';
import type { SyncDeps } from './process-record.ts';
import { s3OnFirstUse } from './queue-message.ts';

let current: Promise<SyncDeps> | undefined;

/** The process's dependencies, built from the configuration on first call. */
export function getSyncDeps(): Promise<SyncDeps> {
  current ??= fromConfig(getConfig()).catch((error: unknown) => {
    current = undefined;
    throw error;
  });
  return current;
}

/** Uses `deps` for every later batch (the local stack, tests). */
export function setSyncDeps(deps: SyncDeps | undefined): void {
  current = deps === undefined ? undefined : Promise.resolve(deps);
}

async function fromConfig(config: Config): Promise<SyncDeps> {
  return {
    db: await getDb({ applicationName: 'k8s-inventory-sync', login: 'sync' }),
    // The SDK's S3 client is loaded on the first claim check only.
    s3: s3OnFirstUse(async () =>
      (await import('./aws-clients.ts')).s3FromConfig(config),
    ),
    timeoutMs: config.SYNC_TIMEOUT_MS,
    eventRetentionHours: config.EVENT_RETENTION_HOURS,
    maxReceives: config.QUEUE_MAX_RECEIVE_COUNT,
    eventHistoryDays: config.EVENT_HISTORY_DAYS,
    span: traceSpan,
    seriesWrites: seriesWrites(seriesWriterFromConfig(config)),
  };
}
