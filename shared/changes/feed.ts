/**
 * The change feed (GET /api/v1/changes): recorded changes inside the caller's
 * changes:read scope, newest first, paged. Every filter narrows; the scope is
 * applied in SQL, so a row outside it is never read.
 */
import * as z from 'zod';
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import {
  kindField,
  namespaceField,
  objectNameField,
  patternField,
  timeField,
  uuidField,
} from '../http/fields.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';

const EVENT_TYPE = /^[a-z][a-z0-9_]{0,63}$/;
const SOURCE = /^[a-z][a-z0-9:_-]{0,63}$/;

export const CHANGES_DEFAULT_PER_PAGE = 50;
export const CHANGES_MAX_PER_PAGE = 200;
/** Without `from`, the feed reads this far back from `to`. */
const DEFAULT_WINDOW_MS = 7 * 24 * 3_600_000;

const feedSchema = z.object({
  cluster_id: uuidField('cluster_id').optional(),
  namespace: namespaceField().optional(),
  workload: objectNameField('workload').optional(),
  kind: kindField().optional(),
  event_type: patternField(
    'event_type',
    EVENT_TYPE,
    'an event type such as workload_changed',
  ).optional(),
  source: patternField(
    'source',
    SOURCE,
    'a source such as k8s-config',
  ).optional(),
  from: timeField('from').optional(),
  to: timeField('to').optional(),
  ...pagingFields(CHANGES_MAX_PER_PAGE),
});

/** The route table's query of the feed: every error is 400 bad_request. */
export const changeFeedQuery = {
  schema: feedSchema,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export interface ChangeFeedQuery {
  clusterId?: string | undefined;
  namespace?: string | undefined;
  workload?: string | undefined;
  kind?: string | undefined;
  eventType?: string | undefined;
  source?: string | undefined;
  from: Date;
  to: Date;
  paging: Paging;
}

/** A workload name is unique only within its namespace: a 400 without one. */
export function requireNamespaceForWorkload(q: {
  namespace?: string | undefined;
  workload?: string | undefined;
}): void {
  if (q.workload && !q.namespace) {
    throw new ValidationError(
      'workload needs namespace: a workload name is unique only within its namespace',
      { details: { param: 'workload' } },
    );
  }
}

/**
 * A change view's window: `to` defaults to now, `from` to seven days
 * before `to`, and `from` must come first; a 400 naming `from` otherwise.
 */
export function changeWindow(
  q: { from?: Date | undefined; to?: Date | undefined },
  now: Date,
): { from: Date; to: Date } {
  const to = q.to ?? now;
  const from = q.from ?? new Date(to.getTime() - DEFAULT_WINDOW_MS);
  if (from >= to) {
    throw new ValidationError('from must be before to', {
      details: { param: 'from' },
    });
  }
  return { from, to };
}

/**
 * The checks across parameters (workload needs namespace, from before to)
 * and the defaults, over the values the route's schema read.
 */
export function changeFeedQueryOf(
  q: z.output<typeof feedSchema>,
  now: Date = new Date(),
): ChangeFeedQuery {
  requireNamespaceForWorkload(q);
  const { from, to } = changeWindow(q, now);
  return {
    clusterId: q.cluster_id,
    namespace: q.namespace,
    workload: q.workload,
    kind: q.kind,
    eventType: q.event_type,
    source: q.source,
    from,
    to,
    paging: pagingOf(q, CHANGES_DEFAULT_PER_PAGE),
  };
}

export interface ChangeRecord {
  id: string;
  source: string;
  event_type: string;
  client_id: string;
  environment_id: string | null;
  host_id: string | null;
  scanned_at: Date | null;
  severity: string;
  summary: string;
  details: Record<string, unknown>;
  created_at: Date;
}

export interface ChangeFeedPage {
  items: ChangeRecord[];
  meta: PageMeta & { from: string; to: string };
}

/**
 * One page of the feed. The effective time (observed, else recorded) orders
 * and windows it, matching idx_change_events_client_effective.
 */
export async function listChangeFeed(
  db: Queryable,
  scope: Scope,
  q: ChangeFeedQuery,
): Promise<ChangeFeedPage> {
  const params = new SqlParams();
  const where = [
    scopeCondition(scope, params),
    `coalesce(scanned_at, created_at) between ${params.add(q.from)} and ${params.add(q.to)}`,
  ];
  if (q.clusterId)
    where.push(`details ->> 'cluster_id' = ${params.add(q.clusterId)}`);
  if (q.namespace)
    where.push(`details ->> 'namespace' = ${params.add(q.namespace)}`);
  if (q.workload) where.push(`details ->> 'name' = ${params.add(q.workload)}`);
  if (q.kind) where.push(`details ->> 'kind' = ${params.add(q.kind)}`);
  if (q.eventType) where.push(`event_type = ${params.add(q.eventType)}`);
  if (q.source) where.push(`source = ${params.add(q.source)}`);
  const filter = where.join(' and ');
  const countValues = [...params.values];
  const limit = params.add(q.paging.perPage);
  const offset = params.add(offsetOf(q.paging));
  const [items, [total]] = await Promise.all([
    query<ChangeRecord & Record<string, unknown>>(
      db,
      `select id, source, event_type, client_id, environment_id, host_id,
              scanned_at, severity, summary, details, created_at
       from change_events
       where ${filter}
       order by coalesce(scanned_at, created_at) desc, id desc
       limit ${limit} offset ${offset}`,
      params.values,
    ),
    query<{ total: number }>(
      db,
      `select count(*)::int as total from change_events where ${filter}`,
      countValues,
    ),
  ]);
  return {
    items,
    meta: {
      ...pageMeta(total?.total ?? 0, q.paging),
      from: q.from.toISOString(),
      to: q.to.toISOString(),
    },
  };
}
