/**
 * The 14-day event history (`k8s_event_history`, migrations/0014): what the
 * sync copies into it, and the daily partitions it lives in.
 *
 * What a row is (the spec's "what a row is"): one sighting of a distinct
 * (cluster, involved object, type, reason, count, last-seen time, message).
 * The table's key collapses an unchanged event synced again; a count change
 * is a new row. The sync copies, in its own transaction:
 * - every event of the snapshot that is new or changed since the last sync
 *   (its 24-hour row's digest tells), and
 * - every event too old for the 24-hour table but within the history
 *   window (the 24-hour table has no digest for it; the key collapses it),
 * each only with a last-seen time (an agent older than v0.8.0 reports
 * events.k8s.io events without one: copying them would list one event once
 * per sync), no older than EVENT_HISTORY_DAYS, and not past the partitions
 * made ahead. So a no-change resync writes nothing and sends nothing.
 *
 * Messages are stored secret-sanitized (and sanitized again when read).
 */
import type { Queryable } from '../db/pool.ts';
import { prepared, query, queryOne } from '../db/pool.ts';
import { sanitizeMessage } from '../sanitize/secrets.ts';
import type { Inventory } from '../wire/inventory.ts';

type WireEvent = NonNullable<Inventory['events']>[number];

const DAY_MS = 86_400_000;
/** Days of partitions made ahead of today, for agents whose clock runs ahead. */
export const PARTITION_DAYS_AHEAD = 3;

function utcDay(at: Date): number {
  return Math.floor(at.getTime() / DAY_MS);
}

function isoDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The window a sync at `now` copies: [from, until). */
export function historyWindow(
  now: Date,
  days: number,
): { from: Date; until: Date } {
  return {
    from: new Date(now.getTime() - days * DAY_MS),
    until: new Date((utcDay(now) + PARTITION_DAYS_AHEAD + 1) * DAY_MS),
  };
}

/** One row of the history insert's JSON (INSERT_HISTORY's recordset). */
export interface HistoryRow {
  [column: string]: unknown;
  seen_at: string;
  namespace: string;
  involved_kind: string | null;
  involved_name: string | null;
  type: string | null;
  reason: string | null;
  count: number | null;
  message: string | null;
}

/**
 * The rows to copy, or undefined when none: `unchanged` holds the
 * snapshot's events whose 24-hour row is unchanged. The caller serializes
 * them as the sync serializes every row it writes (NUL dropped).
 */
export function eventHistoryRows(
  events: readonly WireEvent[],
  unchanged: ReadonlySet<unknown>,
  window: { from: Date; until: Date },
): HistoryRow[] | undefined {
  const from = window.from.getTime();
  const until = window.until.getTime();
  const rows: HistoryRow[] = [];
  for (const event of events) {
    if (unchanged.has(event) || !event.last_seen) continue;
    const seen = Date.parse(event.last_seen);
    if (!(seen >= from && seen < until)) continue;
    rows.push({
      seen_at: event.last_seen,
      namespace: event.namespace,
      involved_kind: event.involved_object?.kind ?? null,
      involved_name: event.involved_object?.name ?? null,
      type: event.type ?? null,
      reason: event.reason ?? null,
      count: event.count ?? null,
      message:
        event.message === undefined || event.message === null
          ? null
          : sanitizeMessage(event.message),
    });
  }
  return rows.length === 0 ? undefined : rows;
}

const INSERT_HISTORY = `
  insert into k8s_event_history (
    cluster_id, seen_at, namespace, involved_kind, involved_name, type,
    reason, count, message, content_id)
  select $1, e.seen_at, e.namespace, e.involved_kind, e.involved_name,
    e.type, e.reason, e.count, e.message,
    k8s_event_content_id(e.seen_at, e.namespace, e.involved_kind,
      e.involved_name, e.type, e.reason, e.count, e.message)
  from jsonb_to_recordset($2::jsonb) as e(
    seen_at timestamptz, namespace text, involved_kind text,
    involved_name text, type text, reason text, count integer, message text)
  on conflict do nothing`;

/** Copies {@link eventHistoryRows}' JSON; a sighting already held stays one row. */
export async function insertEventHistory(
  db: Queryable,
  clusterId: string,
  json: string,
): Promise<void> {
  await query(db, prepared(INSERT_HISTORY), [clusterId, json]);
}

const ENSURE_PARTITIONS = `
  select k8s_event_history_ensure_partitions($1::date, $2::date) as made`;
const DROP_PARTITIONS = `
  select k8s_event_history_drop_partitions($1::date) as dropped`;

export interface PartitionUpkeep {
  made: number;
  dropped: number;
}

/**
 * Makes the partitions of every day of the window and the days ahead, and
 * drops the ones wholly past it (the retention sweep; the local stack runs
 * it at start).
 */
export async function keepEventHistoryPartitions(
  db: Queryable,
  days: number,
  now: Date = new Date(),
): Promise<PartitionUpkeep> {
  const made = await ensureEventHistoryPartitions(db, days, now);
  const firstKept = utcDay(historyWindow(now, days).from);
  const { dropped } = await queryOne<{ dropped: number }>(db, DROP_PARTITIONS, [
    isoDay(firstKept),
  ]);
  return { made, dropped };
}

/** Per database pool: the UTC day (and window) its partitions were made for. */
const ensuredFor = new WeakMap<Queryable, string>();

/**
 * Makes sure the partitions a sync at `now` may write exist; a no-op after
 * the first call of the day in this process. Runs in its own statement,
 * before the sync's transaction, so no sync holds the table's lock while a
 * partition is made.
 */
export async function ensureEventHistoryPartitions(
  db: Queryable,
  days: number,
  now: Date = new Date(),
): Promise<number> {
  const key = `${utcDay(now)}:${days}`;
  if (ensuredFor.get(db) === key) return 0;
  const window = historyWindow(now, days);
  const { made } = await queryOne<{ made: number }>(db, ENSURE_PARTITIONS, [
    isoDay(utcDay(window.from)),
    isoDay(utcDay(window.until) - 1),
  ]);
  ensuredFor.set(db, key);
  return made;
}
