/**
 * The sync: applies one inventory snapshot of one cluster to PostgreSQL in one
 * transaction (the spec's processing steps 1 to 17).
 *
 * Each row is mapped to its table shape and digested; the digests stored with
 * the rows tell which rows changed without asking the database row by row,
 * so a resync writes only what changed and prunes only what disappeared.
 * Kinds missing from the message were not collected: they are neither
 * written nor pruned.
 */
import { hash as digest } from 'node:crypto';
import { isIP } from 'node:net';
import { syncArgocdApplications } from '../argocd/applications.ts';
import {
  type ReplacedPolicy,
  recordNetworkPolicyChanges,
} from '../changes/network-policy-changes.ts';
import { clampSnapshotTime, isNewerSnapshot } from '../changes/rules.ts';
import {
  applyWorkloadFacts,
  type FactsStepResult,
  factsDigest,
} from '../changes/workload-changes.ts';
import { refusedDataOf } from '../db/errors.ts';
import { type Db, type Tx, withTransaction } from '../db/pool.ts';
import { RejectedInventoryError } from '../errors.ts';
import {
  ensureEventHistoryPartitions,
  eventHistoryRows,
  historyWindow,
  insertEventHistory,
} from '../events/history.ts';
import { faultPoint } from '../faults.ts';
import type { SnapshotRows } from '../metrics/series.ts';
import {
  type Inventory,
  KIND_KEYS,
  toWireInventory,
  validateRows,
  WIRE_RULES_VERSION,
  type WireInventory,
  type WorkloadRow,
} from '../wire/inventory.ts';
import type { SentRows } from '../wire/sent-rows.ts';
import {
  type DbRow,
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
  keyOf,
  type Link,
  naturalKey,
  PRUNE_ORDER,
  ROW_SHAPE_VERSION,
} from './kinds.ts';
import {
  copyColumns,
  copyRows,
  deferRollups,
  deleteRows,
  findTenant,
  insertClusterIfMissing,
  type LinkageCounts,
  type LockedCluster,
  linkNodesToHosts,
  listLinkIds,
  listStoredRows,
  lockCluster,
  refreshRollups,
  repairLinks,
  type StoredFacts,
  type StoredRow,
  setFactsWireDigests,
  updateClusterAndAsset,
  upsertRows,
} from './repo.ts';

export interface SyncSubject {
  clientSlug: string;
  envSlug: string;
  agentId: string;
}

export interface KindCounts {
  received: number;
  upserted: number;
  unchanged: number;
  pruned: number;
  /** Rows of the snapshot whose key an earlier row of it already had. */
  duplicates: number;
  /** The first few of those keys (`namespace/name`), each bounded. */
  duplicateKeys: string[];
  /** Whether its rows, all new, were written by COPY (COPY_KINDS). */
  copied: boolean;
}

/** How many duplicate keys a kind's counts name, and how long each may be. */
const DUPLICATE_KEYS_KEPT = 5;
const DUPLICATE_KEY_CHARS = 120;

export interface SyncResult {
  /** What the facts step did (workload change records). */
  facts: FactsStepResult;
  /**
   * skipped_not_newer: the snapshot is not newer than the one applied (an
   * older one redelivered late, or a replay of the same one): a no-op.
   */
  outcome: 'applied' | 'skipped_not_newer';
  clusterId: string;
  clientId: string;
  environmentId: string;
  snapshotAt: Date;
  /** True when the agent's clock was ahead and its stamp was clamped. */
  clamped: boolean;
  kinds: Partial<Record<KindKey, KindCounts>>;
  linkage: LinkageCounts;
  durationMs: number;
  /**
   * Of durationMs, the client's CPU-bound work on the rows under the lock:
   * each row's digest and key, and the schema on the new or changed rows
   * (before any write, or for a kind validated as written in its step).
   */
  validationMs: number;
  /**
   * The rows the series write reads after the commit (SnapshotRows): a new
   * or changed row as the schema validated it, an unchanged one as sent
   * (accepted before, not validated or normalized again), each kind's rows
   * read only when first asked for.
   */
  seriesRows: SnapshotRows;
}

/** Runs a named step (a tracing span in AWS). */
export type SpanRunner = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

export interface SyncOptions {
  /** The 60 s bound of the whole transaction, lock wait included. */
  timeoutMs?: number;
  /** Events last seen longer ago than this are not kept (the 24 h list). */
  eventRetentionHours?: number;
  /** How many days of event history to keep (EVENT_HISTORY_DAYS). */
  eventHistoryDays?: number;
  now?: () => Date;
  span?: SpanRunner;
  /** Test seam: runs after the upserts, before the prune. */
  beforePrune?: (tx: Tx) => Promise<void>;
  /** The message's JetStream stream sequence (isNewerSnapshot). */
  streamSeq?: number | undefined;
}

/** The spec's cluster status → asset status mapping. */
export const ASSET_STATUS: Record<string, string> = {
  healthy: 'active',
  degraded: 'degraded',
  unreachable: 'unreachable',
  unknown: 'active',
};

/** A DNS-1123 label from a cluster name, for URLs. */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  return slug || 'cluster';
}

const NUL_ESCAPE = /(?<!\\)\\u0000/g;

/** Where an incoming row is read from, by its index in its kind. */
interface RowSource {
  row(index: number): unknown;
}

/**
 * The digests of a kind's rows taken when first read: a kind the cluster
 * holds none of (a first sync's) has nothing to compare them with, so each
 * is taken only to be written, as its row is mapped, while the database
 * writes the rows before it. Not for workloads, whose two digests are few.
 */
class LazyDigests {
  readonly #rows: SentRows;

  constructor(rows: SentRows) {
    this.#rows = rows;
  }

  of(index: number): string {
    return DIGEST_TAG + sentDigest(this.#rows, index);
  }
}

/**
 * One incoming row: its key, the digests of its bytes as sent, and the row
 * itself: validated when `changed` (on first read for a kind validated as
 * written); as sent (and known valid), parsed on first read, when not. One
 * shape for every row, with no closure of its own: a resync makes one per
 * row it was sent, and most are never read.
 */
class IncomingRow {
  readonly key: string;
  /** Workloads: the digest of their spec facts as sent. */
  readonly factsHash: string | undefined;
  readonly changed: boolean;
  /** Undefined for a row given as a value (`#value`). */
  readonly #source: RowSource | undefined;
  readonly #index: number;
  readonly #value: unknown;
  /** Undefined until read when `#digestOf` takes it (LazyDigests). */
  #hash: string | undefined;
  readonly #digestOf: LazyDigests | undefined;

  constructor(
    key: string,
    digest: SentDigest | LazyDigests,
    changed: boolean,
    source: RowSource | undefined,
    index: number,
    value?: unknown,
  ) {
    this.key = key;
    const lazy = digest instanceof LazyDigests;
    this.#hash = lazy ? undefined : digest.hash;
    this.#digestOf = lazy ? digest : undefined;
    this.factsHash = lazy ? undefined : digest.factsHash;
    this.changed = changed;
    this.#source = source;
    this.#index = index;
    this.#value = value;
  }

  /** The tagged digest of the row's bytes, as content_hash stores it. */
  get hash(): string {
    this.#hash ??= (this.#digestOf as LazyDigests).of(this.#index);
    return this.#hash;
  }

  get row(): unknown {
    return this.#source === undefined
      ? this.#value
      : this.#source.row(this.#index);
  }
}

/**
 * What makes two digests comparable: the row shape and the wire rules they
 * were taken under. A row's bytes that match a stored digest were accepted
 * by these very rules, so they are not validated again.
 */
const DIGEST_TAG = `${ROW_SHAPE_VERSION}.${WIRE_RULES_VERSION}:`;

/**
 * The digest of bytes as sent, untagged. Equal digests, equal bytes, so an
 * equal row: SHA-256, as the digest decides what is validated, so a
 * collision must be out of reach, not only unlikely.
 */
function sha256(bytes: Uint8Array): string {
  return digest('sha256', bytes, 'base64');
}

/** The untagged digest of row `i` as sent (every kind's but workloads'). */
function sentDigest(rows: SentRows, i: number): string {
  return sha256(rows.bytes(i));
}

/**
 * Bytes a workload's row digest is taken over, reused from row to row
 * (synchronously, so by one row at a time): one native hash call over a
 * copy costs less than a hash object fed three pieces.
 */
let cutBytes = Buffer.allocUnsafe(64 * 1024);

/** The untagged digest of `prefix` (ASCII), then `head`, then `tail`. */
function sha256Of(prefix: string, head: Uint8Array, tail: Uint8Array): string {
  const length = prefix.length + head.length + tail.length;
  if (length > cutBytes.length) {
    cutBytes = Buffer.allocUnsafe(Math.max(length, 2 * cutBytes.length));
  }
  cutBytes.write(prefix, 0, 'latin1');
  cutBytes.set(head, prefix.length);
  cutBytes.set(tail, prefix.length + head.length);
  return sha256(cutBytes.subarray(0, length));
}

/**
 * A workload's two digests, untagged: of its bytes without its spec facts'
 * value, and of that value, so that a facts-only change does not rewrite
 * its row. Together they fix the row's bytes: the first holds where the
 * facts were cut out (an injective encoding), the second what was cut.
 */
function workloadDigests(
  rows: SentRows,
  i: number,
): { hash: string; factsHash: string } | undefined {
  const cut = rows.around(i, 'spec_facts');
  if (cut === undefined) return undefined; // no object the scan follows
  if (cut === null) {
    return {
      hash: sha256Of(NO_FACTS_CUT, rows.bytes(i), NO_BYTES),
      factsHash: sha256(NULL_BYTES),
    };
  }
  return {
    hash: sha256Of(`${cut.head.length}:`, cut.head, cut.tail),
    factsHash: sha256(cut.value),
  };
}

/** Where the facts were cut out, for a row that has none. */
const NO_FACTS_CUT = '-:';
const NULL_BYTES = Buffer.from('null');
const NO_BYTES = new Uint8Array(0);

/** Starts a digest no stored row has: its row is taken as changed. */
const UNMATCHED = 'unmatched:';

export interface SentDigest {
  /** The tagged digest, as content_hash stores it. */
  hash: string;
  factsHash: string | undefined;
  /** The stored row of the same bytes; undefined: the row is new or changed. */
  same: StoredRow | undefined;
}

/**
 * A kind's stored rows by their digest without its tag, for the rows
 * digested under this tag only: a digest taken under other rules matches
 * nothing, and a sent row's digest is looked up without first being tagged.
 */
function byUntaggedDigest(
  stored: ReadonlyMap<string, StoredRow> | undefined,
): Map<string, StoredRow> {
  const out = new Map<string, StoredRow>();
  for (const row of stored?.values() ?? []) {
    if (row.content_hash.startsWith(DIGEST_TAG)) {
      out.set(row.content_hash.slice(DIGEST_TAG.length), row);
    }
  }
  return out;
}

/**
 * The digests of a kind's rows as sent, taken from their bytes, each looked
 * up among the stored rows' digests: a row whose bytes are stored is known
 * (its key too) without being parsed. Pure computation, before any
 * validation. Exported for its tests and benchmark.
 */
export function digestSent(
  kind: KindKey,
  rows: SentRows,
  stored: ReadonlyMap<string, StoredRow> | undefined,
): SentDigest[] {
  const byDigest = byUntaggedDigest(stored);
  const out: SentDigest[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    if (kind === 'workloads') {
      const digests = workloadDigests(rows, i);
      if (digests === undefined) {
        out[i] = { hash: UNMATCHED, factsHash: undefined, same: undefined };
        continue;
      }
      const factsHash = DIGEST_TAG + digests.factsHash;
      const before = byDigest.get(digests.hash);
      const same =
        before !== undefined && before.facts?.spec_facts_wire_hash === factsHash
          ? before
          : undefined;
      out[i] = {
        hash: before?.content_hash ?? DIGEST_TAG + digests.hash,
        factsHash,
        same,
      };
    } else {
      const hash = sentDigest(rows, i);
      const same = byDigest.get(hash);
      // A stored row's digest is this one tagged: reused, not built again.
      out[i] = {
        hash: same?.content_hash ?? DIGEST_TAG + hash,
        factsHash: undefined,
        same,
      };
    }
  }
  return out;
}

/**
 * Kinds whose new and changed rows are parsed and validated as they are
 * written, not before: every kind that no step before its own reads. A
 * large first sync's rows are then parsed while the database writes the
 * kind or chunk before, not while it waits for the first write. Only their
 * keys are read first, from the key members' bytes. The HPAs, which the
 * workloads' facts step reads, and the nodes, read by linkage, are
 * validated up front.
 */
const VALIDATED_AS_WRITTEN: ReadonlySet<KindKey> = new Set(
  KIND_ORDER.filter((kind) => kind !== 'hpas' && kind !== 'nodes'),
);

/**
 * The validation of the rows checkRows leaves for later: `row(kind, i)`
 * validates one on first read; `finish()` reads every kind not read yet
 * and validates every row not validated yet, and is run before the commit,
 * so that a malformed row refuses the whole message even if no step read
 * it (a duplicate key's earlier row, a kind no step reached).
 */
class DeferredValidation {
  /** Time spent reading and validating rows: the sync's validation time. */
  ms = 0;
  readonly #inventory: WireInventory;
  readonly #validated: Partial<Record<KindKey, Map<number, unknown>>> = {};
  readonly #pending = new Map<KindKey, number[]>();
  /** Kinds whose rows are digested and keyed only when first read. */
  readonly #unread = new Map<KindKey, () => unknown>();

  constructor(inventory: WireInventory) {
    this.#inventory = inventory;
  }

  #timing = false;

  /** Times `fn` into `ms` (a read of a kind, a validation), once. */
  timed<T>(fn: () => T): T {
    if (this.#timing) return fn();
    this.#timing = true;
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.ms += performance.now() - started;
      this.#timing = false;
    }
  }

  unread(kind: KindKey, read: () => unknown): void {
    this.#unread.set(kind, read);
  }

  read(kind: KindKey): void {
    this.#unread.delete(kind);
  }

  /** Validates rows now (their keys are no strings as sent), or refuses. */
  validateNow(kind: KindKey, indexes: readonly number[]): Map<number, unknown> {
    if (indexes.length > 0) this.#validate(kind, indexes);
    return this.#validated[kind] ?? new Map();
  }

  defer(kind: KindKey, index: number): void {
    const pending = this.#pending.get(kind) ?? [];
    pending.push(index);
    this.#pending.set(kind, pending);
    this.#validated[kind] ??= new Map();
  }

  row(kind: KindKey, index: number): unknown {
    const valid = this.#validated[kind];
    if (valid?.has(index)) return valid.get(index);
    this.#validate(kind, [index]);
    return this.#validated[kind]?.get(index);
  }

  finish(): void {
    for (const read of [...this.#unread.values()]) read();
    for (const [kind, indexes] of this.#pending) {
      const valid = this.#validated[kind];
      const left = indexes.filter((i) => !valid?.has(i));
      if (left.length > 0) this.#validate(kind, left);
    }
  }

  #validate(kind: KindKey, indexes: readonly number[]): void {
    this.timed(() => {
      const out = validateRows(this.#inventory, { [kind]: indexes });
      const valid = this.#validated[kind] ?? new Map<number, unknown>();
      for (const [i, row] of out[kind] ?? []) valid.set(i, row);
      this.#validated[kind] = valid;
    });
  }
}

/**
 * Every collected kind's rows, the new and changed ones parsed and
 * validated by the wire schema (all of them on a first sync): a malformed
 * one refuses the whole message with the reason the whole schema would
 * give, before anything is written or, for a kind validated as written
 * (VALIDATED_AS_WRITTEN), before the commit. Such a kind's rows are
 * digested and keyed only when its step first reads them, so a large
 * first sync does that while the database writes the kinds before. An
 * unchanged row is read (parsed, as sent) only if a later step reads it.
 */
function checkRows(
  inventory: WireInventory,
  kinds: readonly KindKey[],
  stored: ReadonlyMap<KindKey, ReadonlyMap<string, StoredRow>>,
): {
  rows: Partial<Record<KindKey, IncomingRow[]>>;
  deferred: DeferredValidation;
} {
  const deferred = new DeferredValidation(inventory);
  const rows: Partial<Record<KindKey, IncomingRow[]>> = {};
  for (const kind of kinds) {
    const sentRows = inventory[kind];
    if (sentRows === undefined) continue;
    const read = () => kindRows(kind, sentRows, stored.get(kind), deferred);
    if (!VALIDATED_AS_WRITTEN.has(kind)) {
      rows[kind] = deferred.timed(read);
      continue;
    }
    let memo: IncomingRow[] | undefined;
    const once = () => {
      if (memo === undefined) {
        deferred.read(kind);
        memo = deferred.timed(read);
      }
      return memo;
    };
    deferred.unread(kind, once);
    Object.defineProperty(rows, kind, { enumerable: true, get: once });
  }
  return { rows, deferred };
}

/**
 * One kind's rows: each digested and looked up among the stored ones, a
 * new or changed one validated now, or (VALIDATED_AS_WRITTEN) keyed from
 * its bytes and validated when first read.
 */
function kindRows(
  kind: KindKey,
  sentRows: SentRows,
  stored: ReadonlyMap<string, StoredRow> | undefined,
  deferred: DeferredValidation,
): IncomingRow[] {
  const def = KINDS[kind] as KindDefinition;
  const lazy =
    kind !== 'workloads' && (stored === undefined || stored.size === 0)
      ? new LazyDigests(sentRows)
      : undefined;
  const digests =
    lazy === undefined ? digestSent(kind, sentRows, stored) : undefined;
  const keys = new Map<number, string>();
  const now: number[] = [];
  for (let i = 0; i < sentRows.length; i++) {
    if (digests?.[i]?.same !== undefined) continue;
    const key = VALIDATED_AS_WRITTEN.has(kind)
      ? keyAsSent(def, sentRows, i)
      : undefined;
    if (key === undefined) now.push(i);
    else keys.set(i, key);
  }
  const valid = deferred.validateNow(kind, now);
  const asSent: RowSource = { row: (i) => sentRows.value(i) };
  const validatedLater: RowSource = { row: (i) => deferred.row(kind, i) };
  return Array.from({ length: sentRows.length }, (_, i) => {
    const d = lazy ?? (digests?.[i] as SentDigest);
    if (!(d instanceof LazyDigests) && d.same !== undefined) {
      return new IncomingRow(d.same.key, d, false, asSent, i);
    }
    const key = keys.get(i);
    if (key !== undefined) {
      deferred.defer(kind, i);
      return new IncomingRow(key, d, true, validatedLater, i);
    }
    const row = valid.get(i);
    return new IncomingRow(
      naturalKey(def, row as DbRow),
      d,
      true,
      undefined,
      i,
      row,
    );
  });
}

/**
 * A row's key from the row as sent, as naturalKey reads it from the
 * validated row (the schema keeps key fields as sent): undefined when the
 * bytes are no JSON or a key field is no string, for the schema to refuse.
 */
function keyAsSent(
  def: KindDefinition,
  rows: SentRows,
  i: number,
): string | undefined {
  // Read from the key members' bytes: the row is parsed when validated.
  let sent: string[] | undefined;
  try {
    sent = rows.strings(i, def.keyColumns);
  } catch {
    // A key string no parser reads (a raw control character): the
    // schema refuses the row, naming it.
    return undefined;
  }
  if (sent !== undefined) return keyOf(sent);
  let row: unknown;
  try {
    row = rows.value(i);
  } catch {
    return undefined;
  }
  if (typeof row !== 'object' || row === null) return undefined;
  const fields = row as DbRow;
  if (def.keyColumns.some((c) => typeof fields[c] !== 'string')) {
    return undefined;
  }
  return naturalKey(def, fields);
}

/** Validates every row (nothing stored to compare with), or refuses. */
function validateAll(inventory: WireInventory): void {
  const all: Partial<Record<KindKey, number[]>> = {};
  for (const kind of KIND_KEYS) {
    const rows = inventory[kind];
    if (rows !== undefined) {
      all[kind] = Array.from({ length: rows.length }, (_, i) => i);
    }
  }
  validateRows(inventory, all);
}

/** The series write's rows (SyncResult.seriesRows), each kind read once. */
function seriesRowsOf(
  rows: Partial<Record<KindKey, IncomingRow[]>>,
): SnapshotRows {
  const read = new Map<KindKey, unknown[] | undefined>();
  const kind = (key: 'workloads' | 'nodes' | 'pods') => {
    if (!read.has(key))
      read.set(
        key,
        rows[key]?.map((r) => r.row),
      );
    return read.get(key) as never;
  };
  return {
    get workloads() {
      return kind('workloads');
    },
    get nodes() {
      return kind('nodes');
    },
    get pods() {
      return kind('pods');
    },
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

/** A row to write, and for a new workload when its facts were first seen. */
interface ChangedRow {
  row: IncomingRow;
  /**
   * A new workload: its insert stores its facts as the baseline, seen
   * first at this time (firstFacts), when the row is mapped.
   */
  factsFirstSeen: Date | undefined;
}

/**
 * A changed row as the upsert receives it: its table shape and digests.
 * Mapped as it is sent, so a row validated when read (a first sync's) is
 * validated while the database writes the rows before it.
 */
function changedRow(def: KindDefinition, changed: ChangedRow): DbRow {
  const { row, factsFirstSeen } = changed;
  const mapped = def.toRow(row.row as never);
  mapped.content_hash = row.hash;
  if (row.factsHash !== undefined) mapped.spec_facts_wire_hash = row.factsHash;
  if (factsFirstSeen !== undefined) {
    const facts = firstFacts(row.row as WorkloadRow, factsFirstSeen);
    if (facts) Object.assign(mapped, facts);
  }
  return mapped;
}

/**
 * The changed rows of a kind as one JSON array, stringified in one go (a
 * large cluster's pods are ~9 MB: joining per-row strings cost as much
 * again). PostgreSQL text cannot hold NUL; dropping it beats refusing a
 * cluster.
 */
function rowsJson(rows: readonly DbRow[]): string {
  const json = JSON.stringify(rows);
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '') : json;
}

/**
 * A new workload's facts, stored by its insert as the baseline (first sight
 * records nothing), so the facts step need not write the row again.
 */
function firstFacts(
  workload: WorkloadRow,
  snapshotAt: Date,
): DbRow | undefined {
  const facts = workload.spec_facts;
  if (!facts) return undefined;
  return {
    spec_facts: facts,
    spec_facts_hash: factsDigest(facts),
    spec_facts_at: snapshotAt.toISOString(),
  };
}

/**
 * The events within retention of the snapshot time, by the event's time as
 * k8s_events.seen_at defines it (migrations/0007; before the write, so
 * without its last fallback, the row's write time): an event with no time
 * at all is kept. Read from validated rows and from rows as sent that were
 * accepted before (their times are strings, null or absent alike).
 */
function keptEvents(
  events: readonly IncomingRow[],
  snapshotAt: Date,
  retentionHours: number,
): IncomingRow[] {
  const cutoff = snapshotAt.getTime() - retentionHours * 3_600_000;
  return events.filter(({ row }) => {
    const e = row as {
      last_seen?: string | null;
      first_seen?: string | null;
      created_at?: string | null;
    };
    const seen = e.last_seen ?? e.first_seen ?? e.created_at;
    return !seen || Date.parse(seen) >= cutoff;
  });
}

/** What linkage reads of a node: a validated row and a valid one as sent. */
interface NodeAddresses {
  name: string;
  addresses?: readonly { type: string; address: string }[] | null;
}

function nodeAddressPairs(nodes: readonly NodeAddresses[]) {
  const nodeNames: string[] = [];
  const ips: string[] = [];
  for (const node of nodes) {
    for (const a of node.addresses ?? []) {
      // An address with a zone (fe80::1%eth0) is no `inet`: no host has it.
      if (
        (a.type === 'InternalIP' || a.type === 'ExternalIP') &&
        isIP(a.address) &&
        !a.address.includes('%')
      ) {
        nodeNames.push(node.name);
        ips.push(a.address);
      }
    }
  }
  return { nodeNames, ips };
}

const NO_FACTS: FactsStepResult = {
  baselined: 0,
  diffed: 0,
  recorded: 0,
  notNewer: 0,
};

const identitySpan: SpanRunner = (_name, fn) => fn();

/**
 * Applies one snapshot. Throws RejectedInventoryError for a message that can
 * never apply (unknown tenant, agent mismatch, a value PostgreSQL cannot
 * store: refusalOf); any other error is worth a retry. Either way the
 * database is left as it was.
 */
export async function syncInventory(
  db: Db,
  subject: SyncSubject,
  message: WireInventory | Inventory,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const started = performance.now();
  const inventory = toWireInventory(message);
  const span = options.span ?? identitySpan;
  const now = options.now?.() ?? new Date();
  if (inventory.agent_id.toLowerCase() !== subject.agentId.toLowerCase()) {
    // A malformed row is named first, as when the whole schema ran first.
    validateAll(inventory);
    throw new RejectedInventoryError(
      `agent_id: ${inventory.agent_id} does not match the subject's agent ${subject.agentId}`,
    );
  }
  const stamp = new Date(inventory.timestamp);
  const { at: snapshotAt, clamped } = clampSnapshotTime(stamp, now);
  const order = { at: snapshotAt, stamp, streamSeq: options.streamSeq };
  const status = inventory.cluster.status ?? 'unknown';
  const assetStatus = ASSET_STATUS[status] ?? 'active';

  const historyDays = options.eventHistoryDays ?? 14;
  if (inventory.events !== undefined) {
    await ensureEventHistoryPartitions(db, historyDays, now);
  }

  const tenant = await findTenant(db, subject.clientSlug, subject.envSlug);
  if (!tenant) {
    validateAll(inventory);
    throw new RejectedInventoryError(
      `unknown client or environment: ${subject.clientSlug}/${subject.envSlug}`,
    );
  }

  return withTransaction(
    db,
    async (tx) => {
      const { cluster, created } = await span('k8s.upsert_cluster', () =>
        lockOrCreateCluster(
          tx,
          tenant,
          subject.agentId,
          inventory,
          assetStatus,
        ),
      );
      const base = {
        clusterId: cluster.id,
        clientId: tenant.client_id,
        environmentId: tenant.environment_id,
        snapshotAt,
        clamped,
      };
      // Under the lock: the stored digests tell which rows changed, and
      // only those are validated, before anything is written.
      const present = KIND_ORDER.filter((k) => inventory[k] !== undefined);
      const storedByKind = new Map<KindKey, Map<string, StoredRow>>();
      const stored = created
        ? []
        : await listStoredRows(tx, cluster.id, present);
      for (const row of stored) {
        const byKey =
          storedByKind.get(row.kind) ?? new Map<string, StoredRow>();
        storedByKind.set(row.kind, byKey);
        byKey.set(row.key, row);
      }
      const { rows, deferred } = checkRows(inventory, present, storedByKind);
      const seriesRows = seriesRowsOf(rows);

      const applied = {
        at: cluster.last_snapshot_at,
        stamp: cluster.last_snapshot_stamp,
        streamSeq: cluster.last_stream_seq,
      };
      if (!isNewerSnapshot(applied, order)) {
        // Not newer: an older snapshot redelivered late, or a replay (an
        // equal time). Nothing is written; its workloads are counted as
        // skipped for change purposes. A malformed row still refuses it.
        deferred.finish();
        return {
          ...base,
          outcome: 'skipped_not_newer' as const,
          kinds: {},
          linkage: { linked: 0, unlinked: 0 },
          facts: {
            ...NO_FACTS,
            notNewer: new Set((rows.workloads ?? []).map((w) => w.key)).size,
          },
          durationMs: performance.now() - started,
          validationMs: deferred.ms,
          seriesRows,
        };
      }
      const { kinds, linkage, facts } = await applyKinds(
        tx,
        cluster,
        tenant,
        inventory,
        rows,
        storedByKind,
        {
          snapshotAt,
          span,
          retentionHours: options.eventRetentionHours ?? 24,
          history: historyWindow(now, historyDays),
          beforePrune: options.beforePrune,
        },
      ).catch((error: unknown) => {
        // A row the database refused gives way to a malformed row not yet
        // validated: the schema's refusal comes first, as when it ran first.
        if (error instanceof RejectedInventoryError) deferred.finish();
        throw error;
      });
      deferred.finish();
      await syncArgocdApplications(
        tx,
        { id: cluster.id, clientId: tenant.client_id },
        inventory.argocd_applications,
      );
      await span('k8s.upsert_cluster', () =>
        updateClusterAndAsset(
          tx,
          cluster,
          {
            ...inventory.cluster,
            status,
            agent_version: inventory.agent_version ?? null,
            collection: inventory.collection ?? null,
          },
          assetStatus,
          order,
        ),
      );
      await faultPoint('sync.before-commit', { tx, clusterId: cluster.id });
      return {
        ...base,
        outcome: 'applied' as const,
        kinds,
        linkage,
        facts,
        durationMs: performance.now() - started,
        validationMs: deferred.ms,
        seriesRows,
      };
    },
    {
      timeoutMs: options.timeoutMs ?? 60_000,
      settings: {
        // A large cluster's rows arrive as one multi-MB parameter per kind:
        // enough memory keeps its hash joins from spilling to disk.
        work_mem: '64MB',
        // The statements are prepared (repo.ts); a custom plan would be
        // made again on every bind, and no parameter here changes the plan
        // (a cluster id, one JSON array whose rows the planner cannot see).
        plan_cache_mode: 'force_generic_plan',
      },
    },
  );
}

async function lockOrCreateCluster(
  tx: Tx,
  tenant: { client_id: string; environment_id: string },
  agentId: string,
  inventory: WireInventory,
  assetStatus: string,
): Promise<{ cluster: LockedCluster; created: boolean }> {
  const existing = await lockCluster(tx, tenant.environment_id, agentId);
  if (existing) return { cluster: existing, created: false };
  await insertClusterIfMissing(tx, {
    clientId: tenant.client_id,
    environmentId: tenant.environment_id,
    agentId,
    name: inventory.cluster.name,
    slug: slugify(inventory.cluster.name),
    assetStatus,
  });
  const cluster = await lockCluster(tx, tenant.environment_id, agentId);
  if (!cluster) throw new Error('cluster row vanished after insert');
  // A first sync racing another may find the other's rows: only a cluster
  // with no snapshot applied yet is known to hold none.
  return { cluster, created: cluster.last_snapshot_at === null };
}

interface ApplyContext {
  snapshotAt: Date;
  span: SpanRunner;
  retentionHours: number;
  /** Events last seen in [from, until) are copied to the 14-day history. */
  history: { from: Date; until: Date };
  beforePrune: ((tx: Tx) => Promise<void>) | undefined;
}

const SPAN_OF: Partial<Record<KindKey, string>> = {
  nodes: 'k8s.sync_nodes',
  namespaces: 'k8s.sync_namespaces',
  workloads: 'k8s.sync_workloads',
};

/**
 * How many changed rows one upsert statement carries. A large kind's rows
 * go in several statements, so the client maps and serializes the next
 * chunk while the database writes this one, instead of the database idling
 * through a whole kind's serialization (a large cluster's pods: ~9 MB of
 * JSON). The chunks are disjoint (a key is written once: byKey), so
 * writing them one after the other is the single upsert's effect.
 */
export const UPSERT_CHUNK_ROWS = 1000;

/** What a kind's write needs, worked out before any SQL runs for it. */
interface PreparedKind {
  /**
   * The changed rows (with what a new workload's insert adds), mapped
   * and serialized chunk by chunk as they are written (upsertChunks).
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
  /** All rows new to a cluster that holds none of the kind: COPY them. */
  copy: boolean;
  /** Events only: the rows to copy to the 14-day history, as JSON. */
  history?: string | undefined;
  /**
   * The changed rows' statement texts (COPY text or upsert JSON, chunk by
   * chunk) when they were built ahead, while the database wrote an earlier
   * kind (buildAhead); otherwise each chunk is built as the one before it
   * is sent.
   */
  built?: string[];
}

/**
 * Compares a kind's rows with the stored digests and serializes the
 * changed ones: pure computation, no SQL.
 */
function prepareKind(
  kind: KindKey,
  sent: readonly IncomingRow[],
  stored: Map<string, StoredRow> | undefined,
  ctx: ApplyContext,
): PreparedKind {
  const rows =
    kind === 'events'
      ? keptEvents(sent, ctx.snapshotAt, ctx.retentionHours)
      : sent;
  const duplicateKeys: string[] = [];
  const incoming = byKey(rows, duplicateKeys);
  const storedRows = stored ?? new Map<string, StoredRow>();
  const changed: PreparedKind['changed'] = [];
  const unchanged = new Set<unknown>();
  const replaced: PreparedKind['replaced'] = [];
  const factsOnly: PreparedKind['factsOnly'] = { ids: [], digests: [] };
  let added = 0;
  for (const row of incoming.values()) {
    const before = storedRows.get(row.key);
    if (!before) added++;
    if (before !== undefined && before.content_hash === row.hash) {
      // Read by the events history only: an unchanged row is parsed if read.
      if (kind === 'events') unchanged.add(row.row);
      if (
        row.factsHash !== undefined &&
        before.facts?.spec_facts_wire_hash !== row.factsHash
      ) {
        factsOnly.ids.push(before.id);
        factsOnly.digests.push(row.factsHash);
      }
      continue;
    }
    if (before) replaced.push({ id: before.id, wire: row.row });
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
    changed,
    copy:
      COPY_KINDS.has(kind) &&
      storedRows.size === 0 &&
      changed.length >= COPY_MIN_ROWS,
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
  };
}

/** The upsert's JSON of the changed rows, UPSERT_CHUNK_ROWS at a time. */
function* upsertJsonChunks(
  kind: KindKey,
  changed: PreparedKind['changed'],
): Generator<string> {
  const def = KINDS[kind] as KindDefinition;
  for (let start = 0; start < changed.length; start += UPSERT_CHUNK_ROWS) {
    const rows: DbRow[] = [];
    const end = Math.min(changed.length, start + UPSERT_CHUNK_ROWS);
    for (let i = start; i < end; i++) {
      rows.push(changedRow(def, changed[i] as ChangedRow));
    }
    yield rowsJson(rows);
  }
}

/**
 * Writes a kind's changed rows, one statement per chunk of upsert JSON:
 * each chunk is built while the previous one is being written (one
 * statement in flight at a time, on the transaction's connection).
 * `sent` is called once the last statement is on its way.
 */
async function upsertChunks(
  tx: Tx,
  kind: KindKey,
  clusterId: string,
  chunks: Iterable<string>,
  sent: () => void,
): Promise<void> {
  let writing: Promise<unknown> | undefined;
  const iterator = chunks[Symbol.iterator]();
  let chunk = iterator.next();
  while (!chunk.done) {
    const json = chunk.value;
    if (writing !== undefined) await writing;
    writing = upsertRows(tx, kind, clusterId, json).catch((error: unknown) => {
      throw refusalOf(error, kind);
    });
    // Awaited at the next chunk or below, even if the next mapping throws.
    writing.catch(() => {});
    // Lets the socket take this chunk's bytes before the next is built.
    await new Promise<void>((resolve) => setImmediate(resolve));
    chunk = iterator.next();
  }
  sent();
  if (writing !== undefined) await writing;
}

/**
 * The kinds whose rows may be copied instead of upserted: those with many
 * rows in a large cluster and only scalar and jsonb columns (a text[]
 * column would need the array literal syntax). A first sync of a large
 * cluster's pods in one COPY costs the server about a third less than the
 * JSON upsert: no multi-MB jsonb parameter to parse and unpack, no
 * conflict check, no joins.
 */
const COPY_KINDS: ReadonlySet<KindKey> = new Set([
  'workloads',
  'pods',
  'events',
  'endpoint_slices',
]);

/** Below this many rows, a kind's rows are upserted (one round trip less). */
export const COPY_MIN_ROWS = 200;

/**
 * About how much COPY text (in UTF-16 code units) is sent at once. Small
 * enough that the server starts on the first rows within a millisecond of
 * the first being mapped, instead of idling through a whole chunk's
 * mapping (500 of a large cluster's workloads took ~20 ms to map); large
 * enough that a chunk's write and pause cost nothing beside it.
 */
const COPY_CHUNK_CHARS = 64 * 1024;

const COPY_SPECIAL = /[\\\t\n\r\0]/;
const COPY_SPECIALS = /[\\\t\n\r\0]/g;
const COPY_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '\t': '\\t',
  '\n': '\\n',
  '\r': '\\r',
  '\0': '', // PostgreSQL text cannot hold NUL: dropped, as rowsJson does
};

function copyText(text: string): string {
  return COPY_SPECIAL.test(text)
    ? text.replace(COPY_SPECIALS, (c) => COPY_ESCAPES[c] ?? c)
    : text;
}

/**
 * One value in COPY's text format, as the upsert's jsonb_populate_recordset
 * reads the same value from the row's JSON: null as \N, a string as its
 * text, an object or array as its JSON (every jsonb column's value), other
 * scalars as JSON writes them.
 */
function copyValue(value: unknown): string {
  if (value === null || value === undefined) return '\\N';
  if (typeof value === 'string') return copyText(value);
  if (typeof value === 'object') {
    // JSON spells tab, newline, CR and NUL as escapes: only its
    // backslashes need COPY's escape (NUL's escape dropped first).
    let json = JSON.stringify(value);
    if (!json.includes('\\')) return json;
    if (json.includes('\\u0000')) json = json.replace(NUL_ESCAPE, '');
    return json.replaceAll('\\', '\\\\');
  }
  return String(value);
}

/** Ids of a copied row's link targets, by their names (listLinkIds). */
type LinkIds = Map<Link, Map<string, string>>;

/** A string as itself, anything else as no key (module level: per row). */
function keyText(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

function linkKey(link: Link, row: DbRow): string | undefined {
  if (link === 'namespace') return keyText(row.namespace);
  if (link === 'node') return keyText(row.node_name);
  const kind = keyText(row.workload_kind);
  const namespace = keyText(row.namespace);
  const name = keyText(row.workload_name);
  return kind === undefined || namespace === undefined || name === undefined
    ? undefined
    : `${kind}\u0001${namespace}\u0001${name}`;
}

/** COPY text of the changed rows, about COPY_CHUNK_CHARS at a time. */
function* copyChunks(
  kind: KindKey,
  clusterId: string,
  changed: PreparedKind['changed'],
  links: LinkIds,
): Generator<string> {
  const def = KINDS[kind] as KindDefinition;
  const columns = copyColumns(kind).slice(1 + def.links.length);
  let text = '';
  for (const entry of changed) {
    const mapped = changedRow(def, entry);
    let line = clusterId;
    for (const link of def.links) {
      const key = linkKey(link, mapped);
      const id = key === undefined ? undefined : links.get(link)?.get(key);
      line += `\t${id ?? '\\N'}`;
    }
    for (const column of columns) line += `\t${copyValue(mapped[column])}`;
    text += `${line}\n`;
    if (text.length >= COPY_CHUNK_CHARS) {
      yield text;
      text = '';
    }
  }
  if (text !== '') yield text;
}

/**
 * Writes a kind's rows by COPY: links resolved from the ids of the rows
 * they point to (written earlier in this sync: parents come first), each
 * read once per sync.
 */
async function copyKind(
  tx: Tx,
  kind: KindKey,
  clusterId: string,
  prepared: PreparedKind,
  links: LinkIds,
  sent: () => void,
): Promise<void> {
  const def = KINDS[kind] as KindDefinition;
  const missing = def.links.filter((l) => !links.has(l));
  if (missing.length > 0) {
    for (const [link, ids] of await listLinkIds(tx, clusterId, missing)) {
      links.set(link, ids);
    }
  }
  const chunks =
    prepared.built ?? copyChunks(kind, clusterId, prepared.changed, links);
  await copyRows(tx, kind, chunks, sent).catch((error: unknown) => {
    throw refusalOf(error, kind);
  });
}

/**
 * Builds a kind's statement texts ahead of its write (PreparedKind.built),
 * while the database writes an earlier kind. A kind copied needs the ids of
 * its links: unless an earlier copy read them, its text waits for its write.
 */
function buildAhead(
  kind: KindKey,
  clusterId: string,
  prepared: PreparedKind,
  links: LinkIds,
): void {
  if (prepared.built !== undefined || prepared.changed.length === 0) return;
  if (prepared.copy) {
    const def = KINDS[kind] as KindDefinition;
    if (!def.links.every((l) => links.has(l))) return;
    prepared.built = [...copyChunks(kind, clusterId, prepared.changed, links)];
  } else {
    prepared.built = [...upsertJsonChunks(kind, prepared.changed)];
  }
}

/**
 * Events only: the 14-day history's rows of this snapshot, as JSON. Only
 * rows that changed are read: an unchanged one is skipped by identity.
 */
function historyJson(
  events: readonly IncomingRow[],
  unchanged: ReadonlySet<unknown>,
  ctx: ApplyContext,
): string | undefined {
  const rows = eventHistoryRows(
    events.map((e) => e.row) as NonNullable<Inventory['events']>,
    unchanged,
    ctx.history,
  );
  return rows === undefined ? undefined : rowsJson(rows);
}

/**
 * A write of the cluster's own rows that PostgreSQL refused for the data it
 * carried (two nodes with one uid; any value the wire schema let through
 * and a column cannot hold) would fail the same way on every retry: the
 * cluster is locked, so no other writer can be the cause. It becomes a
 * refusal, recorded and counted, naming the snapshot's field and what
 * PostgreSQL named (never the value); the transaction is rolled back, so
 * nothing of the snapshot is applied. Anything else is rethrown for a retry.
 */
function refusalOf(error: unknown, field: string): unknown {
  const refused = refusedDataOf(error);
  if (refused === undefined) return error;
  const where = refused.where === undefined ? '' : ` (${refused.where})`;
  return new RejectedInventoryError(
    `${field}: the database refused ${refused.problem}${where}`,
    { cause: error },
  );
}

/** The stored workloads' facts by key, as the facts step reads them. */
function storedFacts(
  stored: ReadonlyMap<string, StoredRow>,
): Map<string, StoredFacts> {
  const out = new Map<string, StoredFacts>();
  for (const [key, row] of stored) if (row.facts) out.set(key, row.facts);
  return out;
}

/** Steps 3 to 16: upsert every collected kind, link nodes, prune, count. */
async function applyKinds(
  tx: Tx,
  cluster: LockedCluster,
  tenant: { client_id: string; environment_id: string },
  inventory: WireInventory,
  rows: Partial<Record<KindKey, IncomingRow[]>>,
  storedByKind: ReadonlyMap<KindKey, Map<string, StoredRow>>,
  ctx: ApplyContext,
): Promise<{
  kinds: Partial<Record<KindKey, KindCounts>>;
  linkage: LinkageCounts;
  facts: FactsStepResult;
}> {
  // From the message: reading `rows` would read every kind at once.
  const present = KIND_ORDER.filter((k) => inventory[k] !== undefined);
  // The figures follow each write (migrations/0023's triggers), in
  // proportion to the rows it wrote. A first sync writes every row: one
  // recompute after the prune reads them once instead.
  const firstSync = cluster.last_snapshot_at === null;
  if (firstSync) await deferRollups(tx);

  const kinds: Partial<Record<KindKey, KindCounts>> = {};
  const prunable = new Map<KindKey, string[]>();
  const linkTargetsGained = new Set<Link>();
  const allWritten = new Set<KindKey>();
  let linkage: LinkageCounts = { linked: 0, unlinked: 0 };
  let facts = NO_FACTS;
  const linkIds: LinkIds = new Map();

  // Kinds prepared (and built) ahead of their turn, while the database
  // wrote an earlier one.
  const ahead = new Map<KindKey, PreparedKind>();
  const prepare = (kind: KindKey): PreparedKind => {
    const early = ahead.get(kind);
    if (early) return early;
    const prepared = prepareKind(
      kind,
      rows[kind] ?? [],
      storedByKind.get(kind),
      ctx,
    );
    ahead.set(kind, prepared);
    return prepared;
  };
  for (const [index, kind] of present.entries()) {
    const prepared = prepare(kind);
    ahead.delete(kind);
    const storedRows = prepared.stored;
    const write = async (sent: () => void) => {
      if (kind === 'network_policies') {
        // Before the upsert: the diff reads the policies as they were.
        await recordNetworkPolicyChanges(
          tx,
          {
            clusterId: cluster.id,
            clusterName: inventory.cluster.name,
            clientId: tenant.client_id,
            environmentId: tenant.environment_id,
            snapshotAt: ctx.snapshotAt,
          },
          prepared.replaced as ReplacedPolicy[],
        );
      }
      if (prepared.copy) {
        await copyKind(tx, kind, cluster.id, prepared, linkIds, sent);
      } else if (prepared.changed.length > 0) {
        await upsertChunks(
          tx,
          kind,
          cluster.id,
          prepared.built ?? upsertJsonChunks(kind, prepared.changed),
          sent,
        );
      } else {
        sent();
      }
      if (prepared.history !== undefined) {
        await insertEventHistory(tx, cluster.id, prepared.history);
      }
      if (prepared.factsOnly.ids.length > 0) {
        await setFactsWireDigests(
          tx,
          cluster.id,
          prepared.factsOnly.ids,
          prepared.factsOnly.digests,
        );
      }
      if (kind === 'nodes') {
        // Every node, unchanged ones too: a host registered since is found.
        const nodes = (rows.nodes ?? []).map((n) => n.row as NodeAddresses);
        linkage = await linkNodesToHosts(
          tx,
          cluster.id,
          tenant.environment_id,
          nodes.map((n) => n.name),
          nodeAddressPairs(nodes),
        );
      }
      if (kind === 'workloads') {
        // Only workloads that changed can have new facts: an unchanged one
        // sent the very facts the last snapshot stored (or had none).
        const changedWorkloads: WorkloadRow[] = [];
        for (const w of prepared.incoming.values()) {
          if (w.changed) changedWorkloads.push(w.row as WorkloadRow);
        }
        facts = await applyWorkloadFacts(tx, {
          clusterId: cluster.id,
          clusterName: inventory.cluster.name,
          clientId: tenant.client_id,
          environmentId: tenant.environment_id,
          snapshotAt: ctx.snapshotAt,
          workloads: changedWorkloads,
          // Read for each HPA's namespace and target only, which a valid
          // row as sent has as a validated one does (or lacks alike).
          hpas: rows.hpas?.map((h) => h.row) as Inventory['hpas'],
          stored: storedFacts(storedRows),
        });
      }
    };
    const spanName = SPAN_OF[kind];
    const following = present[index + 1];
    if (spanName) {
      // A kind with its own span is written, then the next one prepared:
      // the span must not carry the next kind's CPU.
      await ctx.span(spanName, () => write(() => {}));
      if (following !== undefined) prepare(following);
    } else {
      // The rows are on their way once write() first waits: the next kind
      // is prepared while they are sent and written.
      let sentAll = () => {};
      const sent = new Promise<void>((resolve) => {
        sentAll = resolve;
      });
      let written = false;
      const writing = write(sentAll).finally(() => {
        written = true;
      });
      writing.catch(() => {}); // awaited below, even if preparing throws
      if (following !== undefined) prepare(following);
      // Once every row is sent, the database still writes them (a large
      // first sync's pods: some 100 ms): the following kinds' statements
      // are built meanwhile, one kind at a time until it is done. A kind
      // with its own span is left to its turn.
      await Promise.race([sent, writing.catch(() => {})]);
      for (const later of present.slice(index + 1)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (written || SPAN_OF[later]) break;
        buildAhead(later, cluster.id, prepare(later), linkIds);
      }
      await writing;
    }

    if (prepared.added > 0) {
      if (kind === 'namespaces') linkTargetsGained.add('namespace');
      if (kind === 'nodes') linkTargetsGained.add('node');
      if (kind === 'workloads') linkTargetsGained.add('workload');
    }
    if (prepared.upserted === prepared.received) allWritten.add(kind);
    prunable.set(kind, prepared.gone);
    kinds[kind] = {
      received: prepared.received,
      upserted: prepared.upserted,
      unchanged: prepared.received - prepared.upserted,
      pruned: prepared.gone.length,
      duplicates: prepared.duplicates,
      duplicateKeys: prepared.duplicateKeys,
      copied: prepared.copy,
    };
  }

  if (linkTargetsGained.size > 0)
    await repairLinks(tx, cluster.id, linkTargetsGained, allWritten);
  if (ctx.beforePrune) await ctx.beforePrune(tx);

  await ctx.span('worker.KubernetesPruneUnseen', async () => {
    for (const kind of PRUNE_ORDER) {
      const ids = prunable.get(kind);
      if (ids && ids.length > 0) await deleteRows(tx, kind, cluster.id, ids);
    }
  });
  // A first sync's figures, deferred to here, in one pass over its rows.
  if (firstSync) await refreshRollups(tx, cluster.id);
  return { kinds, linkage, facts };
}
