/**
 * The series write after a committed sync: derived from the snapshot,
 * stamped with the cluster's ids, at the snapshot's time. It runs after the
 * commit and cannot undo or fail it: a store that is down, slow (bounded by
 * the writer's deadline, 2 s by default) or refusing costs one counted,
 * logged failure, and the sync still succeeds. It is never retried: the
 * next sync writes fresher figures.
 *
 * It runs off the sync's critical path (docs/decisions.md): a settled
 * record queues its write and returns; the write (derive, encode, compress,
 * send) starts on the next turn of the event loop, while the batch's next
 * record runs. The batch awaits every queued write before it returns
 * (`settled()`), because a Lambda freezes once its handler returns and a
 * request in flight would then die or land in a later invocation; each is
 * bounded by the writer's deadline, inside the margin a batch keeps past
 * its last sync. At most `maxPending` writes are queued or in flight: a
 * record finding them all busy waits for one to end, so a slow store holds
 * at most that many snapshots in memory.
 */
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';
import { type SnapshotRows, seriesOfSnapshot } from './series.ts';
import type { SeriesWriter } from './writer.ts';

/** What the write needs of the sync's result. */
export interface CommittedSnapshot {
  clusterId: string;
  environmentId: string;
  snapshotAt: Date;
}

/** Writes the snapshot's series; resolves whether or not the write worked. */
export async function writeSnapshotSeries(
  writer: SeriesWriter,
  inventory: SnapshotRows,
  committed: CommittedSnapshot,
): Promise<'written' | 'failed'> {
  const started = performance.now();
  let count = 0;
  try {
    const samples = seriesOfSnapshot(inventory, committed);
    count = samples.length;
    await writer.write(samples, committed.snapshotAt.getTime());
    metrics.addMetric(MetricName.metricsSeriesWritten, MetricUnit.Count, count);
    return 'written';
  } catch (error) {
    metrics.addMetric(MetricName.metricsWriteFailures, MetricUnit.Count, 1);
    logger.warn('cluster series not written; the sync stands', {
      clusterId: committed.clusterId,
      series: count,
      durationMs: Math.round(performance.now() - started),
      error:
        error instanceof Error
          ? `${error.name}: ${error.message}`
          : String(error),
    });
    return 'failed';
  }
}

/** Queued series writes of one process (a Lambda instance, the local stack). */
export interface SeriesWrites {
  /**
   * Queues the write of `committed`'s series and resolves at once, or once
   * a slot is free when `maxPending` writes are already busy.
   */
  enqueue(inventory: SnapshotRows, committed: CommittedSnapshot): Promise<void>;
  /** Resolves when every write queued so far has ended, well or not. */
  settled(): Promise<void>;
}

/** Writes queued in one batch at most (the sync's batch size is 1–5). */
export const MAX_PENDING_WRITES = 5;

export function backgroundSeriesWrites(
  writer: SeriesWriter,
  maxPending = MAX_PENDING_WRITES,
): SeriesWrites {
  const pending = new Set<Promise<unknown>>();
  return {
    async enqueue(inventory, committed) {
      while (pending.size >= maxPending) await Promise.race(pending);
      const write = new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => writeSnapshotSeries(writer, inventory, committed))
        .finally(() => pending.delete(write));
      pending.add(write);
    },
    async settled() {
      while (pending.size > 0) await Promise.allSettled([...pending]);
    },
  };
}

/** The background writes of `writer`; none without a writer. */
export function seriesWrites(
  writer: SeriesWriter | undefined,
): SeriesWrites | undefined {
  return writer === undefined ? undefined : backgroundSeriesWrites(writer);
}
