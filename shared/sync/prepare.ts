/**
 * A kind's rows compared with what the cluster stores, before any SQL runs
 * for it: which rows are new or changed (to write), unchanged (to leave),
 * gone (to prune), and what the counts report.
 */
import { eventHistoryRows } from '../events/history.ts';
import type { Inventory } from '../wire/inventory.ts';
import type { IncomingRow } from './incoming.ts';
import type { KindKey } from './kinds.ts';
import type { StoredRow } from './repo.ts';
import { type ChangedRow, rowsJson } from './table-rows.ts';

/** How many duplicate keys a kind's counts name, and how long each may be. */
const DUPLICATE_KEYS_KEPT = 5;
const DUPLICATE_KEY_CHARS = 120;

/** What preparing a kind needs of the snapshot. */
export interface PrepareContext {
  snapshotAt: Date;
  /** Events last seen longer ago than this are not kept (the 24 h list). */
  retentionHours: number;
  /** Events last seen in [from, until) are copied to the 14-day history. */
  history: { from: Date; until: Date };
}

/** What a kind's write needs, worked out before any SQL runs for it. */
export interface PreparedKind {
  kind: KindKey;
  /**
   * The changed rows (with what a new workload's insert adds), mapped
   * and serialized as they are written (write-kind.ts).
   */
  changed: ChangedRow[];
  received: number;
  duplicates: number;
  duplicateKeys: string[];
  upserted: number;
  /** Rows new to the cluster. */
  added: number;
  /** Ids of stored rows the snapshot no longer has. */
  gone: string[];
  /** Stored rows the snapshot changed: their ids and incoming wire rows. */
  replaced: { id: string; wire: unknown }[];
  /** Workloads only: those whose spec facts alone changed. */
  factsOnly: { ids: string[]; digests: string[] };
  /** The rows the snapshot carries (the last of a key), validated or not. */
  incoming: Map<string, IncomingRow>;
  stored: Map<string, StoredRow>;
  /** Events only: the rows to copy to the 14-day history, as JSON. */
  history?: string | undefined;
  /** Its kind digest was the stored one: no row compared (unchangedKind). */
  sameDigest: boolean;
}

/**
 * Compares a kind's rows with the stored digests: pure computation, no
 * SQL. An unchanged row is not read (parsed) unless a step needs it.
 */
export function prepareKind(
  kind: KindKey,
  sent: readonly IncomingRow[],
  stored: Map<string, StoredRow> | undefined,
  ctx: PrepareContext,
): PreparedKind {
  const rows =
    kind === 'events'
      ? keptEvents(sent, ctx.snapshotAt, ctx.retentionHours)
      : sent;
  const duplicateKeys: string[] = [];
  const incoming = byKey(rows, duplicateKeys);
  const storedRows = stored ?? new Map<string, StoredRow>();
  const changed: PreparedKind['changed'] = [];
  const unchanged = new Set<IncomingRow>();
  const replaced: PreparedKind['replaced'] = [];
  const factsOnly: PreparedKind['factsOnly'] = { ids: [], digests: [] };
  let added = 0;
  for (const row of incoming.values()) {
    const before = storedRows.get(row.key);
    if (!before) added++;
    if (before !== undefined && before.content_hash === row.hash()) {
      // The events history skips these, unread.
      if (kind === 'events') unchanged.add(row);
      if (
        row.factsHash !== undefined &&
        before.facts?.spec_facts_wire_hash !== row.factsHash
      ) {
        factsOnly.ids.push(before.id);
        factsOnly.digests.push(row.factsHash);
      }
      continue;
    }
    if (before) replaced.push({ id: before.id, wire: row.value() });
    changed.push({
      row,
      factsFirstSeen:
        kind === 'workloads' && !before ? ctx.snapshotAt : undefined,
    });
  }
  const gone: string[] = [];
  for (const [key, row] of storedRows) {
    if (!incoming.has(key)) gone.push(row.id);
  }
  return {
    kind,
    changed,
    received: incoming.size,
    duplicates: duplicateKeys.length,
    duplicateKeys: duplicateKeys
      .slice(0, DUPLICATE_KEYS_KEPT)
      .map((key) =>
        key.replaceAll('\u0001', '/').slice(0, DUPLICATE_KEY_CHARS),
      ),
    upserted: changed.length,
    added,
    gone,
    replaced,
    factsOnly,
    incoming,
    stored: storedRows,
    history: kind === 'events' ? historyJson(sent, unchanged, ctx) : undefined,
    sameDigest: false,
  };
}

/**
 * A kind whose kind digest matched the stored one: its rows are the stored
 * rows as sent, in order, with no key twice (a kind with a duplicate key
 * keeps no digest), so nothing is written or pruned and every row counts as
 * unchanged, none of them read.
 */
export function unchangedKind(kind: KindKey, received: number): PreparedKind {
  return {
    kind,
    changed: [],
    received,
    duplicates: 0,
    duplicateKeys: [],
    upserted: 0,
    added: 0,
    gone: [],
    replaced: [],
    factsOnly: { ids: [], digests: [] },
    incoming: new Map(),
    stored: new Map(),
    sameDigest: true,
  };
}

/** A kind's rows by key: the last row of a key wins. */
function byKey(
  rows: readonly IncomingRow[],
  duplicateKeys: string[],
): Map<string, IncomingRow> {
  const incoming = new Map<string, IncomingRow>();
  for (const row of rows) {
    // A duplicate key would make ON CONFLICT touch one row twice: last wins,
    // and the key is reported (an agent bug, never silent).
    if (incoming.has(row.key)) duplicateKeys.push(row.key);
    incoming.set(row.key, row);
  }
  return incoming;
}

/** An event's times, in the order seen_at falls back through them. */
const EVENT_TIMES = ['last_seen', 'first_seen', 'created_at'] as const;

/**
 * The events within retention of the snapshot time, by the event's time as
 * k8s_events.seen_at defines it (migrations/0007; before the write, so
 * without its last fallback, the row's write time): an event with no time
 * at all is kept. Read from validated rows and from rows as sent that were
 * accepted before (their times are strings, null or absent alike), whose
 * times alone are read, not the whole row.
 */
function keptEvents(
  events: readonly IncomingRow[],
  snapshotAt: Date,
  retentionHours: number,
): IncomingRow[] {
  const cutoff = snapshotAt.getTime() - retentionHours * 3_600_000;
  return events.filter((row) => {
    const [last, first, created] = row.members(EVENT_TIMES) as (
      | string
      | null
      | undefined
    )[];
    const seen = last ?? first ?? created;
    return !seen || Date.parse(seen) >= cutoff;
  });
}

/**
 * Events only: the 14-day history's rows of this snapshot, as JSON. Only
 * rows that changed are read: an unchanged one is left out unread.
 */
function historyJson(
  events: readonly IncomingRow[],
  unchanged: ReadonlySet<IncomingRow>,
  ctx: PrepareContext,
): string | undefined {
  const read = events.filter((e) => !unchanged.has(e)).map((e) => e.value());
  const rows = eventHistoryRows(
    read as NonNullable<Inventory['events']>,
    new Set(),
    ctx.history,
  );
  return rows === undefined ? undefined : rowsJson(rows);
}
