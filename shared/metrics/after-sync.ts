/**
 * The series write after a committed sync: derived from the snapshot,
 * stamped with the cluster's ids, at the snapshot's time. It runs after the
 * commit and cannot undo or fail it: a store that is down, slow (bounded by
 * the writer's deadline, 2 s by default) or refusing costs one counted,
 * logged failure, and the sync still succeeds. It is never retried: the
 * next sync writes fresher figures.
 */
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';
import type { Inventory } from '../wire/inventory.ts';
import { seriesOfSnapshot } from './series.ts';
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
  inventory: Inventory,
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
