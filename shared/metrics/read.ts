/**
 * Runs one validated metrics request for one cluster and shapes the answer
 * as the spec's response:
 *
 *   {"series": [{"labels_key", "labels", "data": [{"time", "avg_value", "max_value"?}]}],
 *    "truncated": false, "step_seconds": 60}
 *
 * - Range mode: points fall on multiples of the step (the first at or after
 *   `start`, the last at or before `end`), each covering the step that ends
 *   at its time. A window holding no multiple of the step has no point, so
 *   its `series` is [] (the store is not asked). When a step
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
    return ranked(gathered(found), MAX_INSTANT_SERIES, 0);
  }
  const step = request.stepSeconds;
  const range = {
    start: firstStepAtOrAfter(request.start, step),
    end: seconds(request.end),
    step,
  };
  // A window with no multiple of the step in it (step 60 s, 12:00:10 to
  // 12:00:50) holds no point: its series are [] and the store is not
  // asked, for it would be asked for start after end (Prometheus refuses
  // that; VictoriaMetrics moves end and answers a point outside the window).
  if (range.start > range.end) return ranked([], MAX_RANGE_SERIES, step);
  if (query.perStep || step <= BASE_RESOLUTION_SECONDS) {
    const found = await store.queryRange(promql, range);
    return ranked(gathered(found), MAX_RANGE_SERIES, step);
  }
  const over = (fn: string) =>
    `${fn}((${promql})[${step}s:${BASE_RESOLUTION_SECONDS}s])`;
  const [averages, peaks] = await Promise.all([
    queryRangeInChunks(store, over('avg_over_time'), range),
    queryRangeInChunks(store, over('max_over_time'), range),
  ]);
  return ranked(
    withPeaks(gathered(averages), gathered(peaks)),
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

/** The time in whole unix seconds, rounded down (a point at or before it). */
function seconds(time: Date): number {
  return Math.floor(time.getTime() / 1000);
}

/**
 * The first multiple of `step` seconds at or after `time`, in unix seconds:
 * from the milliseconds, so a start of 12:00:00.5 gives 12:01:00, not
 * 12:00:00 (which is before it).
 */
function firstStepAtOrAfter(time: Date, step: number): number {
  return Math.ceil(time.getTime() / (step * 1000)) * step;
}

/** The labels as one string: `{a="x",b="y"}`, names sorted, values quoted. */
export function labelsKey(labels: Readonly<Record<string, string>>): string {
  const pairs = Object.keys(labels)
    .sort()
    .map((name) => `${name}=${quoteLabelValue(labels[name] ?? '')}`);
  return `{${pairs.join(',')}}`;
}

/**
 * A series while it is ranked: its finite points as parallel arrays of unix
 * seconds and values (the response's point objects and time strings are
 * built only for the series that are kept), and its peak.
 */
interface Gathered {
  labels_key: string;
  labels: Record<string, string>;
  times: number[];
  averages: number[];
  /** The step's peak of each point; absent where a point is the value itself. */
  peaks: number[] | undefined;
  peak: number;
}

/** Store series with their non-finite points dropped (a series left empty too). */
function gathered(found: readonly StoreSeries[]): Gathered[] {
  const series: Gathered[] = [];
  for (const { labels: raw, points } of found) {
    const { __name__: _name, ...labels } = raw;
    const times: number[] = [];
    const averages: number[] = [];
    let peak = Number.NEGATIVE_INFINITY;
    for (const [time, text] of points) {
      const value = Number(text);
      if (!Number.isFinite(value)) continue;
      times.push(time);
      averages.push(value);
      if (value > peak) peak = value;
    }
    if (times.length > 0) {
      series.push({
        labels_key: labelsKey(labels),
        labels,
        times,
        averages,
        peaks: undefined,
        peak,
      });
    }
  }
  return series;
}

/**
 * Each average point gets its step's peak. A point whose peak is missing or
 * not finite is a gap, like a non-finite average.
 */
function withPeaks(
  averages: readonly Gathered[],
  peaks: readonly Gathered[],
): Gathered[] {
  const peaksOf = new Map<string, Gathered>();
  for (const series of peaks) peaksOf.set(series.labels_key, series);
  const merged: Gathered[] = [];
  for (const series of averages) {
    const found = peaksOf.get(series.labels_key);
    if (!found) continue;
    const peakAt = new Map<number, number>();
    for (let i = 0; i < found.times.length; i++) {
      peakAt.set(found.times[i] as number, found.averages[i] as number);
    }
    const times: number[] = [];
    const values: number[] = [];
    const stepPeaks: number[] = [];
    let peak = Number.NEGATIVE_INFINITY;
    for (let i = 0; i < series.times.length; i++) {
      const time = series.times[i] as number;
      const max = peakAt.get(time);
      if (max === undefined) continue;
      times.push(time);
      values.push(series.averages[i] as number);
      stepPeaks.push(max);
      if (max > peak) peak = max;
    }
    if (times.length > 0) {
      merged.push({
        ...series,
        times,
        averages: values,
        peaks: stepPeaks,
        peak,
      });
    }
  }
  return merged;
}

/**
 * Highest peak first (ties by labels_key), at most `cap`, as the response's
 * series. Series share their timestamps, so each time string is made once.
 */
function ranked(
  series: Gathered[],
  cap: number,
  stepSeconds: number,
): MetricsData {
  series.sort(
    (a, b) =>
      b.peak - a.peak ||
      (a.labels_key < b.labels_key ? -1 : a.labels_key > b.labels_key ? 1 : 0),
  );
  const timeText = new Map<number, string>();
  const textOf = (time: number): string => {
    let text = timeText.get(time);
    if (text === undefined) {
      text = new Date(time * 1000).toISOString();
      timeText.set(time, text);
    }
    return text;
  };
  return {
    series: series
      .slice(0, cap)
      .map(({ labels_key, labels, times, averages, peaks }) => ({
        labels_key,
        labels,
        data: times.map((time, i): MetricsPoint => {
          const at = textOf(time);
          const avg_value = averages[i] as number;
          return peaks === undefined
            ? { time: at, avg_value }
            : { time: at, avg_value, max_value: peaks[i] as number };
        }),
      })),
    truncated: series.length > cap,
    step_seconds: stepSeconds,
  };
}
