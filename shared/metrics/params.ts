/**
 * The metrics route's parameters, validated only after the access checks
 * (the caller learns nothing from a 400 about a cluster it may not read).
 *
 *   start, end      RFC 3339, start before end, at most 30 days apart (both required)
 *   namespace       a DNS-1123 label: required by cpu_by_workload and the per-workload queries
 *   workload        a DNS-1123 subdomain (≤ 253): required by the per-workload queries
 *   workload_kind   an upper-case letter then ≤ 62 letters or digits: likewise
 *   instant         true or false; true only on cpu_by_namespace and memory_by_namespace
 *
 * Each filter is refused by every query that does not take it. Any other
 * parameter is refused (400 bad_request), as is a repeated one.
 *
 * The step comes from the range: 1m up to 6h, 5m up to 24h, 15m up to 7d,
 * 1h beyond (each bound inclusive).
 */

import { ValidationError } from '../errors.ts';
import {
  booleanField,
  kindField,
  namespaceField,
  objectNameField,
  timeField,
} from '../http/fields.ts';
import { type RouteQuery, readRouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';
import {
  METRICS_QUERIES,
  type MetricsQueryDefinition,
  type MetricsQueryScope,
} from './queries.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
export const MAX_RANGE_MS = 30 * DAY;

/** The step table: the first row whose range bound holds the range. */
const STEPS: readonly { upToMs: number; stepSeconds: number }[] = [
  { upToMs: 6 * HOUR, stepSeconds: 60 },
  { upToMs: DAY, stepSeconds: 300 },
  { upToMs: 7 * DAY, stepSeconds: 900 },
  { upToMs: Number.POSITIVE_INFINITY, stepSeconds: 3600 },
];

/** The step of a range `rangeMs` long, in seconds. */
export function stepForRange(rangeMs: number): number {
  const row = STEPS.find((candidate) => rangeMs <= candidate.upToMs);
  return row?.stepSeconds ?? 3600;
}

export const metricsParamsSchema = z.object({
  start: z.optional(timeField('start')),
  end: z.optional(timeField('end')),
  namespace: z.optional(namespaceField()),
  workload: z.optional(objectNameField('workload')),
  workload_kind: z.optional(kindField('workload_kind')),
  instant: z.optional(booleanField('instant')),
});

/**
 * The route table's query entry of the metrics route. start and end are
 * required, but the schema reads them as optional so that their absence is
 * refused in toMetricsRequest, after the filters and instant: the 400 names
 * the first rule broken in that order. `requiredInHandler` has the API
 * reference (docs/api.md, docs/openapi.json) list them as required.
 */
export const metricsQuery = {
  schema: metricsParamsSchema,
  unknownParam: 'bad_request',
  requiredInHandler: ['start', 'end'],
} as const satisfies RouteQuery;

/** The filters each scope takes (and requires). */
const FILTERS_OF: Readonly<
  Record<
    MetricsQueryScope,
    readonly ('namespace' | 'workload' | 'workload_kind')[]
  >
> = {
  cluster: [],
  namespace: ['namespace'],
  workload: ['namespace', 'workload', 'workload_kind'],
};
const ALL_FILTERS = ['namespace', 'workload', 'workload_kind'] as const;

export interface MetricsRequest {
  query: MetricsQueryDefinition;
  start: Date;
  end: Date;
  /** 0 in instant mode. */
  stepSeconds: number;
  instant: boolean;
  namespace?: string | undefined;
  workload?: string | undefined;
  workloadKind?: string | undefined;
}

function refuse(param: string, message: string): never {
  throw new ValidationError(message, { details: { param } });
}

/**
 * Validates a metrics request: the query name, then the query string (an
 * unknown or repeated parameter first), the filters the query does not
 * take, those it requires, instant, and the range.
 */
export function parseMetricsRequest(
  queryName: string | undefined,
  rawQueryString: string | undefined,
): MetricsRequest {
  const query = queryNamed(queryName);
  return toMetricsRequest(query, readRouteQuery(rawQueryString, metricsQuery));
}

/** The allow-listed query of that name, else a 400. */
export function queryNamed(
  queryName: string | undefined,
): MetricsQueryDefinition {
  const query = METRICS_QUERIES.get(queryName ?? '');
  if (!query) {
    throw new ValidationError('unknown metrics query', {
      details: { param: 'query', allowed: [...METRICS_QUERIES.keys()] },
    });
  }
  return query;
}

/** The rules between the parameters and the query, on values read. */
export function toMetricsRequest(
  query: MetricsQueryDefinition,
  params: z.output<typeof metricsParamsSchema>,
): MetricsRequest {
  const takes = FILTERS_OF[query.scope];
  for (const filter of ALL_FILTERS) {
    if (params[filter] !== undefined && !takes.includes(filter)) {
      refuse(filter, `${filter} is not a parameter of ${query.name}`);
    }
  }
  for (const filter of takes) {
    if (params[filter] === undefined) {
      refuse(filter, `${filter} is required by ${query.name}`);
    }
  }
  const instant = params.instant === true;
  if (instant && !query.instant) {
    refuse('instant', `instant is not accepted by ${query.name}`);
  }
  const { start, end } = params;
  if (start === undefined) refuse('start', 'start is required');
  if (end === undefined) refuse('end', 'end is required');
  const rangeMs = end.getTime() - start.getTime();
  if (rangeMs <= 0) refuse('start', 'start must be before end');
  if (rangeMs > MAX_RANGE_MS) {
    refuse('start', 'start and end may be at most 30 days apart');
  }
  return {
    query,
    start,
    end,
    stepSeconds: instant ? 0 : stepForRange(rangeMs),
    instant,
    namespace: params.namespace,
    workload: params.workload,
    workloadKind: params.workload_kind,
  };
}
