/**
 * The events timeline (spec "Events Timeline (14 days)"): a cluster's
 * Kubernetes events from the 14-day history (`k8s_event_history`), newest
 * first, with the spec's filters, window, limit and notes.
 *
 * The store differs from the spec's (PostgreSQL, not VictoriaLogs:
 * docs/decisions.md); its intent holds: every filter is a bound parameter
 * of one fixed statement (no caller text becomes query text), and every
 * read is confined to the stored cluster's id, so a row is only ever read
 * back for its own cluster, whose tenant the route checked.
 *
 * - Window: from and to are inclusive to the nanosecond. Rows hold
 *   microseconds, so `from` is rounded up and `to` down to the microsecond:
 *   an event at exactly `to` is returned. to defaults to now, from to 24
 *   hours before to; from must be before to, the window at most 14 days; a
 *   window starting before the retention edge gets a note.
 * - A workload (`workload` + `workload_kind` + `namespace`): its own events,
 *   its ReplicaSets' and its pods', by the names Kubernetes generates
 *   (workload-match.ts). The name check runs inside the statement, before
 *   the limit, so a truncated workload page is a full one.
 * - Rows collapse at write time (history.ts), so the limit counts distinct
 *   sightings; `truncated` says more exist, with a note.
 * - The read is one statement under a 20 s deadline, made once: a database
 *   failure is 502 events_backend_unavailable, the deadline 504
 *   events_backend_timeout; never an empty list.
 * - Messages are secret-sanitized again on the way out.
 */
import type { Scope } from '../auth/access.ts';
import { clusterInScope } from '../auth/scope-sql.ts';
import { sqlStateOf } from '../db/errors.ts';
import { SqlParams } from '../db/params.ts';
import type { Db } from '../db/pool.ts';
import { query, TransactionTimeoutError, withTransaction } from '../db/pool.ts';
import {
  EventsBackendTimeoutError,
  EventsBackendUnavailableError,
  ValidationError,
} from '../errors.ts';
import { formatNanoTime } from '../http/fields.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import type { TimelineParameters } from './params.ts';
import { ownedNamePatterns, type WorkloadKind } from './workload-match.ts';

const NS_PER_MS = 1_000_000n;
const NS_PER_DAY = 86_400_000n * NS_PER_MS;
export const MAX_WINDOW_DAYS = 14;
export const DEFAULT_LIMIT = 200;
export const READ_DEADLINE_MS = 20_000;

/** Microsecond text PostgreSQL parses exactly: `…T…​.ffffffZ`. */
function microText(us: bigint): string {
  const ms = us / 1000n;
  const whole = new Date(Number(ms)).toISOString().slice(0, 19);
  const micro = (((us % 1_000_000n) + 1_000_000n) % 1_000_000n)
    .toString()
    .padStart(6, '0');
  return `${whole}.${micro}Z`;
}

export interface TimelineQuery {
  namespace?: string;
  involvedKind?: string;
  involvedName?: string;
  /** The workload and the kinds it may be (the timeline route names one). */
  workload?: { kinds: readonly WorkloadKind[]; name: string };
  type?: string;
  /** Any of these reasons (the route takes one; what-changed a set). */
  reasons?: readonly string[];
  /** Nanoseconds since the epoch, both inclusive. */
  from: bigint;
  to: bigint;
  limit: number;
}

/**
 * The rules between parameters (a workload needs its kind and namespace
 * and excludes involved_name; the window's order and span), with the
 * defaults applied. Throws ValidationError naming the parameter.
 */
export function timelineQuery(
  params: TimelineParameters,
  now: Date,
): TimelineQuery {
  if (params.workload !== undefined) {
    if (params.workload_kind === undefined) {
      throw new ValidationError('workload needs workload_kind');
    }
    if (params.namespace === undefined) {
      throw new ValidationError('workload needs namespace');
    }
    if (params.involved_name !== undefined) {
      throw new ValidationError(
        'workload cannot be combined with involved_name',
      );
    }
  } else if (params.workload_kind !== undefined) {
    throw new ValidationError('workload_kind needs workload');
  }
  const to = params.to ?? BigInt(now.getTime()) * NS_PER_MS;
  const from = params.from ?? to - NS_PER_DAY;
  if (from >= to) throw new ValidationError('from must be before to');
  if (to - from > BigInt(MAX_WINDOW_DAYS) * NS_PER_DAY) {
    throw new ValidationError(
      `the window from from to to may not exceed ${MAX_WINDOW_DAYS} days`,
    );
  }
  return {
    ...(params.namespace !== undefined && { namespace: params.namespace }),
    ...(params.involved_kind !== undefined && {
      involvedKind: params.involved_kind,
    }),
    ...(params.involved_name !== undefined && {
      involvedName: params.involved_name,
    }),
    ...(params.workload !== undefined &&
      params.workload_kind !== undefined && {
        workload: { kinds: [params.workload_kind], name: params.workload },
      }),
    ...(params.type !== undefined && { type: params.type }),
    ...(params.reason !== undefined && { reasons: [params.reason] }),
    from,
    to,
    limit: params.limit ?? DEFAULT_LIMIT,
  };
}

export interface TimelineEvent {
  id: string;
  time: string;
  namespace: string;
  involved_kind: string | null;
  involved_name: string | null;
  type: string | null;
  reason: string | null;
  message: string | null;
  count: number | null;
}

export interface Timeline {
  events: TimelineEvent[];
  truncated: boolean;
  from: string;
  to: string;
  notes: string[];
}

// One statement for every filter combination: an absent filter is a null
// parameter, and node-postgres' unnamed statements are planned with the
// values, so each read gets the plan of its own filters. The workload
// filter reads names equal to the workload's or starting with `<name>-`
// (an index range in "C" order), then keeps the generated name shapes.
const TIMELINE_ROWS = `
  select content_id as id,
    rtrim(rtrim(to_char(seen_at at time zone 'UTC',
      'YYYY-MM-DD"T"HH24:MI:SS.US'), '0'), '.') || 'Z' as time,
    namespace, involved_kind, involved_name, type, reason, message, count
  from k8s_event_history
  where cluster_id = $1
    and seen_at >= $2::timestamptz and seen_at <= $3::timestamptz
    and ($4::text is null or namespace = $4)
    and ($5::text is null or involved_kind = $5)
    and ($6::text is null or involved_name = $6)
    and ($7::text is null or type = $7)
    and ($8::text[] is null or reason = any($8::text[]))
    and ($9::text is null or (
      (involved_name = $9 or (involved_name >= $9 || '-' and involved_name < $9 || '.'))
      and ((involved_kind = any($10::text[]) and involved_name = $9)
        or (involved_kind = 'ReplicaSet' and involved_name ~ $11)
        or (involved_kind = 'Pod' and involved_name ~ $12))))`;
const TIMELINE_ORDER = `
  order by seen_at desc, content_id desc
  limit $13`;
export const READ_TIMELINE = `${TIMELINE_ROWS}${TIMELINE_ORDER}`;

/**
 * The statement and its values for `q` on one cluster; with a `wall`, the
 * rows are read only while the cluster is inside that scope (what changed's
 * second wall: its other sources carry theirs in their own statement).
 */
export function timelineStatement(
  q: TimelineQuery,
  clusterId: string,
  wall?: Scope,
): { text: string; values: unknown[] } {
  const values = timelineValues(q, clusterId);
  if (wall === undefined) return { text: READ_TIMELINE, values };
  const params = new SqlParams();
  for (const value of values) params.add(value);
  return {
    text: `${TIMELINE_ROWS}
    and ${clusterInScope(params, clusterId, wall)}${TIMELINE_ORDER}`,
    values: params.values,
  };
}

type TimelineRow = TimelineEvent & Record<string, unknown>;

export interface TimelineContext {
  clusterId: string;
  /** The caller's scope the read must also pass (what changed's second wall). */
  wall?: Scope;
  /** The cluster's agent version as it reported it (null: none). */
  agentVersion: string | null;
  /** EVENT_HISTORY_DAYS. */
  historyDays: number;
  now: Date;
}

/** {@link READ_TIMELINE}'s parameters for `q` on one cluster. */
export function timelineValues(q: TimelineQuery, clusterId: string): unknown[] {
  // Rows hold microseconds: from rounds up, to rounds down.
  const fromUs = q.from / 1000n + (q.from % 1000n > 0n ? 1n : 0n);
  const toUs = q.to / 1000n - (q.to % 1000n < 0n ? 1n : 0n);
  const patterns =
    q.workload && ownedNamePatterns(q.workload.kinds, q.workload.name);
  return [
    clusterId,
    microText(fromUs),
    microText(toUs),
    q.namespace ?? null,
    q.involvedKind ?? null,
    q.involvedName ?? null,
    q.type ?? null,
    q.reasons ? [...q.reasons] : null,
    q.workload?.name ?? null,
    q.workload ? [...q.workload.kinds] : null,
    patterns ? patterns.replicaSet : null,
    patterns ? patterns.pod : null,
    q.limit + 1,
  ];
}

/** The cluster's timeline for `q`. */
export async function readTimeline(
  db: Db,
  q: TimelineQuery,
  ctx: TimelineContext,
  options: { deadlineMs?: number } = {},
): Promise<Timeline> {
  const rows = await readOnce(
    db,
    timelineStatement(q, ctx.clusterId, ctx.wall),
    options.deadlineMs ?? READ_DEADLINE_MS,
  );
  const truncated = rows.length > q.limit;
  const events = rows.slice(0, q.limit).map((row) => ({
    ...row,
    message: row.message === null ? null : sanitizeMessage(row.message),
  }));
  return {
    events,
    truncated,
    from: formatNanoTime(q.from),
    to: formatNanoTime(q.to),
    notes: timelineNotes(q, ctx, truncated),
  };
}

/**
 * The read's planner settings, local to its transaction (set with the
 * deadline, in the same round trip). The history's recent days are read
 * from memory, where PostgreSQL's default random_page_cost (4, a spinning
 * disk's) makes it fetch every row of the window by bitmap and sort them;
 * priced as cached, it walks the index newest first and stops at the
 * limit: 0.39 → 0.16 ms for a medium cluster's day of 400 events, and a
 * busier cluster's window is no longer read whole.
 */
const READ_SETTINGS = { random_page_cost: '1.1' };

/** What ran out of time: the client's deadline, the statement's, a lock wait's. */
const DEADLINE_STATES = new Set(['57014', '55P03']);

/** One attempt, no retry: a slow store is not asked the same query again. */
async function readOnce(
  db: Db,
  statement: { text: string; values: readonly unknown[] },
  deadlineMs: number,
): Promise<TimelineRow[]> {
  try {
    return await withTransaction(
      db,
      (tx) => query<TimelineRow>(tx, statement.text, statement.values),
      { timeoutMs: deadlineMs, settings: READ_SETTINGS },
    );
  } catch (error) {
    if (
      error instanceof TransactionTimeoutError ||
      DEADLINE_STATES.has(sqlStateOf(error) ?? '')
    ) {
      throw new EventsBackendTimeoutError(
        `the events store did not answer within ${deadlineMs / 1000} s; narrow the window or add a filter`,
        { cause: error },
      );
    }
    throw new EventsBackendUnavailableError(
      'the events store could not be read',
      { cause: error },
    );
  }
}

/** v0.8.0 and later report every event's last-seen time. */
export function agentReportsLastSeen(version: string | null): boolean {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version ?? '');
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > 0 || minor >= 8;
}

export const OLD_AGENT_NOTE =
  "the cluster's agent is older than v0.8.0 or reported no version: events it sent without a last-seen time (events.k8s.io events such as FailedScheduling) are not in this history; the 24-hour events list shows them";

/** The note for a window that starts before the history's edge, if it does. */
export function retentionNote(
  from: bigint,
  ctx: Pick<TimelineContext, 'now' | 'historyDays'>,
): string | undefined {
  const edge =
    BigInt(ctx.now.getTime()) * NS_PER_MS -
    BigInt(ctx.historyDays) * NS_PER_DAY;
  return from < edge
    ? `events are kept for ${ctx.historyDays} days: nothing before ${formatNanoTime(edge)} can be shown`
    : undefined;
}

function timelineNotes(
  q: TimelineQuery,
  ctx: TimelineContext,
  truncated: boolean,
): string[] {
  const notes: string[] = [];
  const retention = retentionNote(q.from, ctx);
  if (retention) notes.push(retention);
  if (truncated) {
    notes.push(
      `more than ${q.limit} events match in this window; only the newest ${q.limit} are shown: narrow the window or add a filter`,
    );
  }
  if (!agentReportsLastSeen(ctx.agentVersion)) notes.push(OLD_AGENT_NOTE);
  return notes;
}
