/**
 * The change feed (GET /api/v1/changes): recorded changes inside the caller's
 * changes:read scope, newest first, paged. Every filter narrows; the scope is
 * applied in SQL, so a row outside it is never read.
 */
import { z } from 'zod';
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import { isUuid } from '../http/ids.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import {
  DNS_1123_LABEL,
  DNS_1123_SUBDOMAIN,
  isRfc3339Time,
  KIND_NAME,
} from '../http/patterns.ts';
import { parseQuery } from '../http/query.ts';

const EVENT_TYPE = /^[a-z][a-z0-9_]{0,63}$/;
const SOURCE = /^[a-z][a-z0-9:_-]{0,63}$/;

export const CHANGES_DEFAULT_PER_PAGE = 50;
export const CHANGES_MAX_PER_PAGE = 200;
/** Without `from`, the feed reads this far back from `to`. */
const DEFAULT_WINDOW_MS = 7 * 24 * 3_600_000;

const rfc3339 = (name: string) =>
  z
    .string()
    .refine(isRfc3339Time, `${name} must be an RFC 3339 time`)
    .transform((v) => new Date(v));

const pattern = (name: string, re: RegExp, rule: string) =>
  z.string().refine((v) => re.test(v), `${name} must be ${rule}`);

const feedSchema = z.object({
  cluster_id: z.string().refine(isUuid, 'cluster_id must be a UUID').optional(),
  namespace: pattern(
    'namespace',
    DNS_1123_LABEL,
    'a DNS-1123 label',
  ).optional(),
  workload: pattern(
    'workload',
    DNS_1123_SUBDOMAIN,
    'a DNS-1123 subdomain',
  ).optional(),
  kind: pattern(
    'kind',
    KIND_NAME,
    'a Kubernetes kind such as Deployment',
  ).optional(),
  event_type: pattern(
    'event_type',
    EVENT_TYPE,
    'an event type such as workload_changed',
  ).optional(),
  source: pattern('source', SOURCE, 'a source such as k8s-config').optional(),
  from: rfc3339('from').optional(),
  to: rfc3339('to').optional(),
  ...pagingFields(CHANGES_MAX_PER_PAGE),
});

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

/** Validates the feed's parameters; unknown or repeated ones are a 400. */
export function parseChangeFeedQuery(
  rawQueryString: string | undefined,
  now: Date = new Date(),
): ChangeFeedQuery {
  const q = parseQuery(rawQueryString, feedSchema, { rejectUnknown: true });
  if (q.workload && !q.namespace) {
    throw new ValidationError(
      'workload needs namespace: a workload name is unique only within its namespace',
      {
        details: { param: 'workload' },
      },
    );
  }
  const to = q.to ?? now;
  const from = q.from ?? new Date(to.getTime() - DEFAULT_WINDOW_MS);
  if (from >= to) {
    throw new ValidationError('from must be before to', {
      details: { param: 'from' },
    });
  }
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
