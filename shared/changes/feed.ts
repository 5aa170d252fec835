/**
 * The change feed (GET /api/v1/changes): recorded changes inside the caller's
 * changes:read scope, newest first, paged. Every filter narrows; the scope is
 * applied in SQL, so a row outside it is never read.
 */
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
  pagingOf,
} from '../http/paging.ts';
import { CHANGES_PAGING, type ChangeFeedParameters } from './params.ts';

/** Without `from`, the feed reads this far back from `to`. */
const DEFAULT_WINDOW_MS = 7 * 24 * 3_600_000;

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
  q: ChangeFeedParameters,
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
    paging: pagingOf(q, CHANGES_PAGING),
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
