/**
 * The stale-cluster sweep (K8sMaintenanceWorker, spec "Stale Cluster
 * Detection"): a connected cluster whose agent has not reported for
 * `staleMinutes` becomes `disconnected`.
 *
 * It never waits on a sync: each batch locks its clusters with the sync's own
 * lock (FOR NO KEY UPDATE) SKIP LOCKED, so a cluster a sync holds is left
 * alone (the sync is about to mark it connected anyway), and a row a sync
 * committed since the statement began is re-checked under the lock and no
 * longer qualifies. One short statement per batch: nothing is held between
 * batches and only cluster rows are locked, so it cannot deadlock with a sync.
 */
import { type Queryable, query } from '../db/pool.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';

export interface StaleSweepOptions {
  staleMinutes: number;
  /** Clusters per statement. */
  batchSize?: number;
  now?: Date;
}

export interface StaleSweepResult {
  marked: number;
  clusterIds: string[];
}

export const STALE_LOG_MESSAGE = 'marked stale clusters disconnected';

// last_seen_at is written by the sync with the snapshot time; a cluster row
// without one (never synced) ages from its creation.
const MARK_STALE = `
  with stale as (
    select id from clusters
    where agent_status = 'connected'
      and coalesce(last_seen_at, created_at) < $1
    order by id
    limit $2
    for no key update skip locked
  )
  update clusters c
     set agent_status = 'disconnected', updated_at = now()
    from stale
   where c.id = stale.id
  returning c.id`;

/** Marks every stale connected cluster disconnected; safe to run any time. */
export async function markStaleClusters(
  db: Queryable,
  options: StaleSweepOptions,
): Promise<StaleSweepResult> {
  const batchSize = options.batchSize ?? 200;
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - options.staleMinutes * 60_000);
  const clusterIds: string[] = [];
  for (;;) {
    const rows = await query<{ id: string }>(db, MARK_STALE, [
      cutoff,
      batchSize,
    ]);
    for (const row of rows) clusterIds.push(row.id);
    if (rows.length < batchSize) break;
  }
  logger.info(STALE_LOG_MESSAGE, {
    count: clusterIds.length,
    staleMinutes: options.staleMinutes,
    ...(clusterIds.length > 0 ? { clusterIds: clusterIds.slice(0, 50) } : {}),
  });
  metrics.addMetric(
    MetricName.staleClustersMarked,
    MetricUnit.Count,
    clusterIds.length,
  );
  return { marked: clusterIds.length, clusterIds };
}
