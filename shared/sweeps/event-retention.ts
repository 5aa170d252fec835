/**
 * The event retention sweep (spec "Stale Cluster Detection", event cleanup):
 * Kubernetes events last seen (else first seen, else created) longer ago
 * than the retention period are deleted. An event that carries no time at
 * all ages from when the backend last wrote it. It also keeps the 14-day
 * history's daily partitions (made ahead, dropped past EVENT_HISTORY_DAYS)
 * and deletes rate-limit windows that ended long ago.
 *
 * Per cluster, in its own short transaction that first takes the sync's lock
 * on the cluster row (FOR NO KEY UPDATE): SKIP LOCKED on the first pass, so
 * the sweep never queues behind a sync; clusters busy then get one more try
 * with a short lock wait, and any still busy are left for the next run (their
 * sync already drops events past retention from what it writes).
 */
import { type Db, query, type Tx, withTransaction } from '../db/pool.ts';
import {
  keepEventHistoryPartitions,
  type PartitionUpkeep,
} from '../events/history.ts';
import { deleteEndedWindows } from '../http/rate-limit.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';

export interface RetentionSweepOptions {
  retentionHours: number;
  /** EVENT_HISTORY_DAYS: the history's partitions to keep and make. */
  historyDays: number;
  now?: Date;
  /** How long the second pass waits for a busy cluster's lock. */
  lockWaitMs?: number;
}

export interface RetentionSweepResult {
  deleted: number;
  /** The history's daily partitions made ahead and dropped. */
  partitions: PartitionUpkeep;
  /** Rate-limit windows that ended long ago, deleted. */
  rateLimitWindows: number;
  clusters: number;
  /** Clusters still locked by a sync; swept next time. */
  deferred: number;
}

// seen_at (migrations/0007): last seen, else first seen, else created, else
// when the backend last wrote the row; the events list reads the same time.
const LIST_CLUSTERS = `
  select distinct cluster_id from k8s_events where seen_at < $1`;

const LOCK_SKIP = `select id from clusters where id = $1 for no key update skip locked`;
const LOCK_WAIT = `select id from clusters where id = $1 for no key update`;

const DELETE_EXPIRED = `
  with gone as (
    delete from k8s_events where cluster_id = $1 and seen_at < $2
    returning 1
  )
  select count(*)::int as n from gone`;

/** Deletes expired events of every cluster; safe to run any time. */
export async function expireEvents(
  db: Db,
  options: RetentionSweepOptions,
): Promise<RetentionSweepResult> {
  const now = options.now ?? new Date();
  const cutoff = new Date(now.getTime() - options.retentionHours * 3_600_000);
  const lockWaitMs = options.lockWaitMs ?? 2_000;
  const candidates = await query<{ cluster_id: string }>(db, LIST_CLUSTERS, [
    cutoff,
  ]);

  let deleted = 0;
  let clusters = 0;
  const busy: string[] = [];
  for (const { cluster_id: clusterId } of candidates) {
    const n = await withTransaction(db, (tx) =>
      sweepCluster(tx, LOCK_SKIP, clusterId, cutoff),
    );
    if (n === undefined) {
      busy.push(clusterId);
    } else {
      deleted += n;
      clusters++;
    }
  }
  let deferred = 0;
  for (const clusterId of busy) {
    try {
      // The transaction bound is also its lock_timeout.
      const n = await withTransaction(
        db,
        (tx) => sweepCluster(tx, LOCK_WAIT, clusterId, cutoff),
        { timeoutMs: lockWaitMs },
      );
      deleted += n ?? 0;
      clusters++;
    } catch (error) {
      deferred++;
      logger.debug('cluster busy; its events are swept next run', {
        clusterId,
        error: error instanceof Error ? error.message : String(error),
      });
    }
  }

  // The history's retention is whole partitions: no per-cluster lock.
  const partitions = await keepEventHistoryPartitions(
    db,
    options.historyDays,
    now,
  );
  const rateLimitWindows = await deleteEndedWindows(db);

  logger.info('expired kubernetes events deleted', {
    deleted,
    clusters,
    deferred,
    retentionHours: options.retentionHours,
    historyPartitionsMade: partitions.made,
    historyPartitionsDropped: partitions.dropped,
    rateLimitWindows,
  });
  metrics.addMetric(MetricName.eventsExpired, MetricUnit.Count, deleted);
  return { deleted, clusters, deferred, partitions, rateLimitWindows };
}

/** Locks the cluster row, then deletes; undefined when the lock was skipped. */
async function sweepCluster(
  tx: Tx,
  lockSql: string,
  clusterId: string,
  cutoff: Date,
): Promise<number | undefined> {
  const locked = await query(tx, lockSql, [clusterId]);
  // Gone (deleted cluster: its events went with it) or held by a sync.
  if (locked.length === 0) {
    return lockSql === LOCK_SKIP ? undefined : 0;
  }
  const [row] = await query<{ n: number }>(tx, DELETE_EXPIRED, [
    clusterId,
    cutoff,
  ]);
  return row?.n ?? 0;
}
