/**
 * The live-read audit trail (migration 0016, `live_read_audit`): one row per
 * live read that passed the access and parameter checks, whatever became of
 * it. A read the agent is asked for gets its row first (outcome `pending`),
 * completed once the read ends; a row that cannot be written refuses the
 * read (503 audit_unavailable), because an unaudited log read is what the
 * trail exists to prevent. Never stored: log text, object content, the
 * agent's messages.
 *
 * Read back by GET /api/v1/audit/live-reads within the caller's audit:read
 * scope, newest first; kept AUDIT_RETENTION_DAYS by the retention sweep.
 */
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { isoTimestamp, jsonObject } from '../db/json-sql.ts';
import { SqlParams } from '../db/params.ts';
import { execute, type Queryable, query, queryOne } from '../db/pool.ts';
import { LiveReadError } from '../errors.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
} from '../http/paging.ts';
import { JsonText } from '../http/response.ts';
import { logger } from '../observability/logger.ts';
import type { LiveRoute } from './gates.ts';

/** Who read what of which cluster: everything but the outcome. */
export interface AuditEntry {
  requestId: string;
  clientId: string;
  environmentId: string;
  clusterId: string;
  clusterName: string;
  agentId: string;
  subject: string;
  email: string | undefined;
  actor: string;
  route: LiveRoute;
  kind?: string | undefined;
  namespace?: string | undefined;
  name?: string | undefined;
  pod?: string | undefined;
  container?: string | undefined;
  previous?: boolean | undefined;
  sinceTime?: string | undefined;
}

export interface AuditOutcome {
  /** `ok`, or the response's error code. */
  outcome: string;
  status: number;
  durationMs: number;
  /** Bytes of the response body returned (0 for an error). */
  bytes: number;
}

const AUDIT_COLUMNS = `client_id, environment_id, cluster_id, cluster_name,
     agent_id, subject, email, actor, route, kind, namespace, name, pod,
     container, previous, since_time, outcome, status, duration_ms, bytes,
     request_id`;

// The values are selected rather than listed, each cast to its column's
// type, which a select list does not infer.
const AUDIT_TYPES = [
  'uuid',
  'uuid',
  'uuid',
  'text',
  'uuid',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'text',
  'boolean',
  'timestamptz',
  'text',
  'smallint',
  'integer',
  'integer',
  'uuid',
] as const;

function auditValues(entry: AuditEntry, outcome: AuditOutcome | undefined) {
  return [
    entry.clientId,
    entry.environmentId,
    entry.clusterId,
    entry.clusterName,
    entry.agentId,
    entry.subject,
    entry.email ?? null,
    entry.actor,
    entry.route,
    entry.kind ?? null,
    entry.namespace ?? null,
    entry.name ?? null,
    entry.pod ?? null,
    entry.container ?? null,
    entry.previous ?? null,
    entry.sinceTime ?? null,
    outcome?.outcome ?? 'pending',
    outcome?.status ?? null,
    outcome?.durationMs ?? null,
    outcome?.bytes ?? null,
    entry.requestId,
  ];
}

/** `insert into live_read_audit … select <the row>`, without its end. */
function insertRowSql(
  params: SqlParams,
  entry: AuditEntry,
  outcome: AuditOutcome | undefined,
): string {
  const values = auditValues(entry, outcome).map(
    (value, i) => `${params.add(value)}::${AUDIT_TYPES[i]}`,
  );
  return `insert into live_read_audit (${AUDIT_COLUMNS})
    select ${values.join(', ')}`;
}

// The completion commits without waiting for its WAL to reach the disk
// (synchronous_commit off for this statement's transaction alone): the
// statement still runs before the answer, so a row that cannot be
// completed still refuses the read; what a database crash in the next
// fraction of a second could lose is the outcome alone, and the row stays
// `pending`, still saying who read what and when. The pending row itself,
// written before the agent is asked, waits for the disk. The flush was most
// of the completion's time on a shared disk (p90 about 6 ms against 1.5).
const FINISH_SQL = `
  update live_read_audit
     set outcome = $2, status = $3, duration_ms = $4, bytes = $5
   where id = $1 and outcome = 'pending'
     and (select set_config('synchronous_commit', 'off', true)) = 'off'`;

/** `who`: the caller, as the token's subject beside its (verified) email. */
function auditUnavailable(
  cause: unknown,
  who: Pick<AuditEntry, 'subject' | 'email'> | undefined = undefined,
): LiveReadError {
  logger.error('live read refused: its audit row could not be written', {
    ...(who ? { subject: who.subject, email: who.email ?? null } : {}),
    error: cause instanceof Error ? cause.message : String(cause),
  });
  return new LiveReadError(
    'audit_unavailable',
    'live reads are unavailable: the read could not be audited',
    { cause },
  );
}

/**
 * Writes the entry's row, `pending` when no outcome is given yet; returns
 * its id. Throws 503 audit_unavailable when it cannot.
 */
export async function insertAudit(
  db: Queryable,
  entry: AuditEntry,
  outcome?: AuditOutcome,
): Promise<string> {
  try {
    const params = new SqlParams();
    const row = await queryOne<{ id: string }>(
      db,
      `${insertRowSql(params, entry, outcome)} returning id`,
      params.values,
    );
    return String(row.id);
  } catch (error) {
    throw auditUnavailable(error, entry);
  }
}

/** Completes a pending row; 503 audit_unavailable when it cannot. */
export async function finishAudit(
  db: Queryable,
  id: string,
  outcome: AuditOutcome,
): Promise<void> {
  let updated: number;
  try {
    updated = await execute(db, FINISH_SQL, [
      id,
      outcome.outcome,
      outcome.status,
      Math.round(outcome.durationMs),
      outcome.bytes,
    ]);
  } catch (error) {
    throw auditUnavailable(error);
  }
  if (updated !== 1) {
    throw auditUnavailable(new Error(`audit row ${id} is not pending`));
  }
}

// ------------------------------------------------------------- the list

// Its parameters: params.ts's auditListQuery (AUDIT_PAGING).

const ITEM_JSON = jsonObject([
  ['id', 'a.id::text'],
  ['at', isoTimestamp('a.at')],
  ['request_id', 'a.request_id'],
  ['client_id', 'a.client_id'],
  ['environment_id', 'a.environment_id'],
  ['cluster_id', 'a.cluster_id'],
  ['cluster_name', 'a.cluster_name'],
  ['agent_id', 'a.agent_id'],
  ['subject', 'a.subject'],
  ['email', 'a.email'],
  ['actor', 'a.actor'],
  ['route', 'a.route'],
  ['kind', 'a.kind'],
  ['namespace', 'a.namespace'],
  ['name', 'a.name'],
  ['pod', 'a.pod'],
  ['container', 'a.container'],
  ['previous', 'a.previous'],
  ['since_time', isoTimestamp('a.since_time')],
  ['outcome', 'a.outcome'],
  ['status', 'a.status'],
  ['duration_ms', 'a.duration_ms'],
  ['bytes', 'a.bytes'],
]);

export interface AuditFilter {
  user?: string | undefined;
  clusterId?: string | undefined;
  route?: LiveRoute | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/**
 * The audit rows inside `scope` matching every filter, newest first, one
 * page of them, and the total. An empty scope reads nothing.
 */
export async function listAudit(
  db: Queryable,
  scope: Scope,
  filter: AuditFilter,
  paging: Paging,
): Promise<{ items: JsonText<unknown[]>; meta: PageMeta }> {
  const params = new SqlParams();
  const where = [
    scopeCondition(scope, params, {
      client: 'a.client_id',
      environment: 'a.environment_id',
    }),
  ];
  if (filter.user !== undefined) {
    const user = params.add(filter.user);
    where.push(`(lower(a.email) = lower(${user}) or a.subject = ${user})`);
  }
  if (filter.clusterId !== undefined) {
    where.push(`a.cluster_id = ${params.add(filter.clusterId)}`);
  }
  if (filter.route !== undefined) {
    where.push(`a.route = ${params.add(filter.route)}`);
  }
  if (filter.from !== undefined) {
    where.push(`a.at >= ${params.add(filter.from)}::timestamptz`);
  }
  if (filter.to !== undefined) {
    where.push(`a.at <= ${params.add(filter.to)}::timestamptz`);
  }
  const condition = where.join(' and ');
  const limit = params.add(paging.perPage);
  const offset = params.add(offsetOf(paging));
  const rows = await query<{ item: string; total: number }>(
    db,
    `select ${ITEM_JSON}::text as item, count(*) over () as total
       from live_read_audit a
      where ${condition}
      order by a.at desc, a.id desc
      limit ${limit} offset ${offset}`,
    params.values,
  );
  let total = rows[0] === undefined ? undefined : Number(rows[0].total);
  if (total === undefined) {
    const counted = await queryOne<{ total: string }>(
      db,
      `select count(*) as total from live_read_audit a where ${condition}`,
      params.values.slice(0, -2),
    );
    total = Number(counted.total);
  }
  return {
    items: JsonText.array(rows.map((row) => row.item)),
    meta: pageMeta(total, paging),
  };
}

// ------------------------------------------------------------ retention

const EXPIRE_SQL = `
  with gone as (delete from live_read_audit where at < $1 returning 1)
  select count(*)::int as n from gone`;

/** Deletes audit rows older than `days` (the retention sweep). */
export async function expireAudit(
  db: Queryable,
  days: number,
  now: Date = new Date(),
): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 86_400_000);
  const row = await queryOne<{ n: number }>(db, EXPIRE_SQL, [cutoff]);
  return row.n;
}
