/**
 * Reads from a Prometheus-compatible HTTP query API (`/api/v1/query_range`,
 * `/api/v1/query`): VictoriaMetrics, Prometheus, Amazon Managed Service for
 * Prometheus. The base URL may carry a tenant path (VictoriaMetrics
 * cluster's `/select/<tenant>/prometheus`, AMP's `/workspaces/<id>`).
 * Queries are POSTed as a form, so a long selector never meets a URL limit
 * and SigV4 signs the body like any other.
 */
import * as z from '../zod.ts';
import { type MetricsHttp, MetricsStoreError } from './http.ts';

/** One series: its labels and its points as the store wrote them. */
export interface StoreSeries {
  labels: Record<string, string>;
  /** [unix seconds, value text]; the text may be NaN, +Inf, -Inf. */
  points: [number, string][];
}

export interface MetricsStore {
  queryRange(
    promql: string,
    range: { start: number; end: number; step: number },
  ): Promise<StoreSeries[]>;
  queryInstant(promql: string, time: number): Promise<StoreSeries[]>;
}

export const STORE_TIMEOUT_MS = 10_000;

type Point = [number, string];

function isPoint(value: unknown): value is Point {
  return (
    Array.isArray(value) &&
    value.length === 2 &&
    typeof value[0] === 'number' &&
    typeof value[1] === 'string'
  );
}

// A range answer holds thousands of points: checked in place, where
// z.tuple would copy each one (and z.array the list) for nothing.
const point = z.custom<Point>(isPoint, 'expected [time, "value"]');
const points = z.custom<Point[]>(
  (value) => Array.isArray(value) && value.every(isPoint),
  'expected a list of [time, "value"]',
);
const answer = z.object({
  status: z.literal('success'),
  data: z.discriminatedUnion('resultType', [
    z.object({
      resultType: z.literal('matrix'),
      result: z.array(
        z.object({
          metric: z.record(z.string(), z.string()),
          values: points,
        }),
      ),
    }),
    z.object({
      resultType: z.literal('vector'),
      result: z.array(
        z.object({ metric: z.record(z.string(), z.string()), value: point }),
      ),
    }),
  ]),
});

export interface PrometheusStoreOptions {
  /** The query API's base: `<base>/api/v1/query_range`. */
  baseUrl: string;
  http: MetricsHttp;
  timeoutMs?: number;
}

export function prometheusStore(options: PrometheusStoreOptions): MetricsStore {
  const base = options.baseUrl.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? STORE_TIMEOUT_MS;

  async function post(
    path: string,
    form: Record<string, string>,
  ): Promise<z.output<typeof answer>['data']> {
    const response = await options.http({
      url: new URL(`${base}${path}`),
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(form).toString(),
      timeoutMs,
    });
    let parsed: z.output<typeof answer>;
    try {
      parsed = answer.parse(JSON.parse(response.body.toString('utf8')));
    } catch (error) {
      throw new MetricsStoreError('metrics store answered an unreadable body', {
        cause: error,
      });
    }
    return parsed.data;
  }

  return {
    async queryRange(promql, range) {
      const data = await post('/api/v1/query_range', {
        query: promql,
        start: String(range.start),
        end: String(range.end),
        step: `${range.step}s`,
      });
      if (data.resultType !== 'matrix') {
        throw new MetricsStoreError(`range query answered ${data.resultType}`);
      }
      return data.result.map((series) => ({
        labels: series.metric,
        points: series.values,
      }));
    },
    async queryInstant(promql, time) {
      const data = await post('/api/v1/query', {
        query: promql,
        time: String(time),
      });
      if (data.resultType !== 'vector') {
        throw new MetricsStoreError(
          `instant query answered ${data.resultType}`,
        );
      }
      return data.result.map((series) => ({
        labels: series.metric,
        points: [series.value],
      }));
    },
  };
}
