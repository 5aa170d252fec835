/**
 * The stale-cluster sweep (K8sMaintenanceWorker, spec "Stale Cluster
 * Detection"): a connected cluster the backend has applied no snapshot of
 * for `staleMinutes` becomes `disconnected`.
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
  /** The sweep's "now"; the database's clock when not given. */
  now?: Date;
}

export interface StaleSweepResult {
  marked: number;
  clusterIds: string[];
}

export const STALE_LOG_MESSAGE = 'marked stale clusters disconnected';

// Silence is judged by when the backend last applied a snapshot
// (last_received_at, the database's clock), never by last_seen_at, the
// snapshot's own time by the agent's clock: an agent whose clock runs
// behind would be marked disconnected right after each of its syncs. Both
// sides of the comparison are the database's clock. A row without one
// (never synced) ages from its creation.
const MARK_STALE = `
  with stale as (
    select id from clusters
    where agent_status = 'connected'
      and coalesce(last_received_at, created_at)
          < coalesce($1::timestamptz, now()) - make_interval(mins => $3)
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
  const clusterIds: string[] = [];
  for (;;) {
    const rows = await query<{ id: string }>(db, MARK_STALE, [
      options.now ?? null,
      batchSize,
      options.staleMinutes,
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
