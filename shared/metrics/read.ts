/**
 * Runs one validated metrics request for one cluster and shapes the answer
 * as the spec's response:
 *
 *   {"series": [{"labels_key", "labels", "data": [{"time", "avg_value", "max_value"?}]}],
 *    "truncated": false, "step_seconds": 60}
 *
 * - Range mode: points fall on multiples of the step (the first at or after
 *   `start`), each covering the step that ends at its time. When a step
 *   spans several 1-minute samples (steps above 1m), `avg_value` and
 *   `max_value` are the average and the peak of the query over the step
 *   (a subquery at 1-minute resolution). At 1m, and for the restarts
 *   queries (whose point is already the step's total), a point is the
 *   query's own value and carries `avg_value` alone.
 *   A range longer than SUBQUERY_CHUNK_SECONDS is read in chunks of that
 *   length, joined per series: VictoriaMetrics refuses a subquery of more
 *   than 30,000 points per series (`-search.maxPointsPerTimeseries`), which
 *   a 1-minute subquery over more than about 20 days is.
 * - Instant mode: one point per series at `end`, `step_seconds: 0`.
 * - NaN and ±Inf points are dropped as gaps; a series left with no point
 *   is dropped. Series are ranked by their peak (highest first, then by
 *   labels_key) and capped: 50 in range mode, 5,000 in instant mode, with
 *   `truncated: true` when more were found. `series` is never null.
 */
import { ServiceUnavailableError } from '../errors.ts';
import type { MetricsRequest } from './params.ts';
import { quoteLabelValue } from './promql.ts';
import { selectorOf } from './queries.ts';
import type { MetricsStore, StoreSeries } from './store.ts';

export const MAX_RANGE_SERIES = 50;
export const MAX_INSTANT_SERIES = 5_000;
/** The resolution a step's average and peak are taken at. */
const BASE_RESOLUTION_SECONDS = 60;
/** The longest range one subquery covers: 20,160 points at 1 minute. */
export const SUBQUERY_CHUNK_SECONDS = 14 * 24 * 3600;

/** No metrics store is configured (METRICS_URL unset): 503. */
export class MetricsNotConfiguredError extends ServiceUnavailableError {
  override readonly code = 'metrics_not_configured';
}

export interface MetricsPoint {
  time: string;
  avg_value: number;
  max_value?: number;
}

export interface MetricsSeries {
  labels_key: string;
  labels: Record<string, string>;
  data: MetricsPoint[];
}

export interface MetricsData {
  series: MetricsSeries[];
  truncated: boolean;
  step_seconds: number;
}

/** The cluster as stored: its selector's two matchers come from here. */
export interface MetricsCluster {
  id: string;
  environment_id: string;
}

/**
 * The request's series for `cluster`. `store` undefined (not configured)
 * is a MetricsNotConfiguredError; a store failure is a MetricsStoreError.
 */
export async function readClusterMetrics(
  store: MetricsStore | undefined,
  cluster: MetricsCluster,
  request: MetricsRequest,
): Promise<MetricsData> {
  if (!store)
    throw new MetricsNotConfiguredError('metrics store not configured');
  const { query } = request;
  const promql = query.promql(
    selectorOf(query.scope, {
      clusterId: cluster.id,
      environmentId: cluster.environment_id,
      namespace: request.namespace,
      workload: request.workload,
      workloadKind: request.workloadKind,
    }),
    request.stepSeconds,
  );
  if (request.instant) {
    const found = await store.queryInstant(promql, seconds(request.end));
    return ranked(toSeries(found), MAX_INSTANT_SERIES, 0);
  }
  const step = request.stepSeconds;
  const range = {
    start: Math.ceil(seconds(request.start) / step) * step,
    end: seconds(request.end),
    step,
  };
  if (query.perStep || step <= BASE_RESOLUTION_SECONDS) {
    const found = await store.queryRange(promql, range);
    return ranked(toSeries(found), MAX_RANGE_SERIES, step);
  }
  const over = (fn: string) =>
    `${fn}((${promql})[${step}s:${BASE_RESOLUTION_SECONDS}s])`;
  const [averages, peaks] = await Promise.all([
    queryRangeInChunks(store, over('avg_over_time'), range),
    queryRangeInChunks(store, over('max_over_time'), range),
  ]);
  return ranked(
    withPeaks(toSeries(averages), toSeries(peaks)),
    MAX_RANGE_SERIES,
    step,
  );
}

type StoreRange = Parameters<MetricsStore['queryRange']>[1];

/**
 * `range` read in chunks of at most SUBQUERY_CHUNK_SECONDS (each starting on
 * a step, none overlapping), every series' points joined in time order.
 */
async function queryRangeInChunks(
  store: MetricsStore,
  promql: string,
  range: StoreRange,
): Promise<StoreSeries[]> {
  const span = Math.floor(SUBQUERY_CHUNK_SECONDS / range.step) * range.step;
  const chunks: StoreRange[] = [];
  for (let start = range.start; start <= range.end; start += span) {
    const end = Math.min(start + span - range.step, range.end);
    chunks.push({ start, end, step: range.step });
  }
  if (chunks.length === 1) return store.queryRange(promql, range);
  const answers = await Promise.all(
    chunks.map((chunk) => store.queryRange(promql, chunk)),
  );
  const joined = new Map<string, StoreSeries>();
  for (const answer of answers) {
    for (const series of answer) {
      const key = labelsKey(series.labels);
      const seen = joined.get(key);
      if (seen) seen.points.push(...series.points);
      else
        joined.set(key, { labels: series.labels, points: [...series.points] });
    }
  }
  return [...joined.values()];
}

function seconds(time: Date): number {
  return Math.floor(time.getTime() / 1000);
}

/** The labels as one string: `{a="x",b="y"}`, names sorted, values quoted. */
export function labelsKey(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((name) => `${name}=${quoteLabelValue(labels[name] ?? '')}`);
  return `{${pairs.join(',')}}`;
}

/** Store series as response series, non-finite points dropped. */
function toSeries(found: readonly StoreSeries[]): MetricsSeries[] {
  const series: MetricsSeries[] = [];
  for (const { labels: raw, points } of found) {
    const { __name__: _name, ...labels } = raw;
    const data: MetricsPoint[] = [];
    for (const [time, text] of points) {
      const value = Number(text);
      if (!Number.isFinite(value)) continue;
      data.push({
        time: new Date(time * 1000).toISOString(),
        avg_value: value,
      });
    }
    if (data.length > 0)
      series.push({ labels_key: labelsKey(labels), labels, data });
  }
  return series;
}

/**
 * Each average point gets its step's peak. A point whose peak is missing or
 * not finite is a gap, like a non-finite average.
 */
function withPeaks(
  averages: readonly MetricsSeries[],
  peaks: readonly MetricsSeries[],
): MetricsSeries[] {
  const peakOf = new Map<string, Map<string, number>>();
  for (const series of peaks) {
    peakOf.set(
      series.labels_key,
      new Map(series.data.map((p) => [p.time, p.avg_value])),
    );
  }
  const merged: MetricsSeries[] = [];
  for (const series of averages) {
    const seriesPeaks = peakOf.get(series.labels_key);
    const data: MetricsPoint[] = [];
    for (const p of series.data) {
      const max = seriesPeaks?.get(p.time);
      if (max !== undefined) data.push({ ...p, max_value: max });
    }
    if (data.length > 0) merged.push({ ...series, data });
  }
  return merged;
}

function peakOfSeries(series: MetricsSeries): number {
  let peak = Number.NEGATIVE_INFINITY;
  for (const p of series.data)
    peak = Math.max(peak, p.max_value ?? p.avg_value);
  return peak;
}

/** Highest peak first (ties by labels_key), at most `cap`. */
function ranked(
  series: MetricsSeries[],
  cap: number,
  stepSeconds: number,
): MetricsData {
  const peaks = new Map(series.map((s) => [s, peakOfSeries(s)]));
  series.sort(
    (a, b) =>
      (peaks.get(b) ?? 0) - (peaks.get(a) ?? 0) ||
      (a.labels_key < b.labels_key ? -1 : a.labels_key > b.labels_key ? 1 : 0),
  );
  return {
    series: series.slice(0, cap),
    truncated: series.length > cap,
    step_seconds: stepSeconds,
  };
}
