/**
 * The snapshot's rows as the sync reads them: `IncomingRows.rows(kind)`
 * gives each row's key, digest and whether it changed; `row.value()` the
 * row itself. Behind these calls, a row whose bytes match a stored digest
 * is never validated again (nor parsed, unless a step reads it), and a new
 * or changed one is validated by the wire schema: before anything is
 * written, or, for a kind validated as written, when first read, the rest
 * by `validateRest()` before the commit. Either way a malformed row refuses
 * the whole message with the reason the whole schema would give. A digest
 * leaves out the members a kind's table does not store (a pod's usage): a
 * row that matched has those validated on their own.
 */
import type { SnapshotRows } from '../metrics/series.ts';
import {
  validateMembers,
  validateRows,
  type WireInventory,
} from '../wire/decode.ts';
import { KIND_KEYS } from '../wire/inventory.ts';
import type { SentRows } from '../wire/sent-rows.ts';
import { digestSent, LazyDigests, type SentDigest } from './digests.ts';
import {
  type DbRow,
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
  keyOf,
  naturalKey,
} from './kinds.ts';
import type { StoredRow } from './repo.ts';

/** Where an incoming row is read from, by its index in its kind. */
interface RowSource {
  row(index: number): unknown;
  /** Some members of the row, without reading it whole (undefined: cannot). */
  members?(index: number, names: readonly string[]): unknown[] | undefined;
}

/**
 * One incoming row: its key, the digests of its bytes as sent, and the row
 * itself: validated when `changed` (on first read for a kind validated as
 * written); as sent (and known valid), parsed on first read, when not. One
 * shape for every row, with no closure of its own: a resync makes one per
 * row it was sent, and most are never read.
 */
export class IncomingRow {
  readonly key: string;
  /** Workloads: the digest of their spec facts as sent. */
  readonly factsHash: string | undefined;
  readonly changed: boolean;
  /** Undefined for a row given as a value (`#value`). */
  readonly #source: RowSource | undefined;
  readonly #index: number;
  readonly #value: unknown;
  /** Undefined until taken when `#digestOf` takes it (LazyDigests). */
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

  /**
   * The tagged digest of the row's bytes, as content_hash stores it; for a
   * kind the cluster held none of, taken at the first call.
   */
  hash(): string {
    this.#hash ??= (this.#digestOf as LazyDigests).of(this.#index);
    return this.#hash;
  }

  /**
   * The row: as the schema validated it when changed, as sent when not.
   * The first call may parse it, or validate it (and refuse the message).
   */
  value(): unknown {
    return this.#source === undefined
      ? this.#value
      : this.#source.row(this.#index);
  }

  /**
   * The row's members `names` as `value()` has them (undefined: absent):
   * of a row as sent, read from their own bytes, so that a step reading a
   * few members of every row parses no unchanged row whole.
   */
  members(names: readonly string[]): unknown[] {
    const read = this.#source?.members?.(this.#index, names);
    if (read !== undefined) return read;
    const row = this.value() as Record<string, unknown>;
    return names.map((name) => row[name]);
  }
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
 * The rows of every collected kind, each kind read (digested, keyed, its
 * changed rows validated or left to validate) once: at once for a kind
 * validated up front, at its first `rows(kind)` for the others.
 */
export class IncomingRows {
  readonly #inventory: WireInventory;
  readonly #stored: ReadonlyMap<KindKey, ReadonlyMap<string, StoredRow>>;
  /** Each kind's rows once read, in the order the kinds were read. */
  readonly #read = new Map<KindKey, IncomingRow[]>();
  /** Kinds collected and not read yet, in the spec's order. */
  readonly #unread: KindKey[] = [];
  /**
   * Kinds whose rows are the very rows stored (their kind digest matched):
   * nothing to compare or validate, read only if a step asks for them.
   */
  readonly #unchanged: ReadonlySet<KindKey>;
  /** Unchanged kinds whose unstored members were validated. */
  readonly #unstoredValid = new Set<KindKey>();
  /** Rows validated so far, by kind and index. */
  readonly #validated: Partial<Record<KindKey, Map<number, unknown>>> = {};
  /** Changed rows left to validate when read (VALIDATED_AS_WRITTEN). */
  readonly #pending = new Map<KindKey, number[]>();
  /** Time spent reading and validating rows: the sync's validation time. */
  #ms = 0;
  #timing = false;

  /**
   * Reads the kinds validated up front now: a malformed node or HPA
   * refuses the message before anything is written. The `unchanged` kinds
   * sent the rows stored, as stored (their kind digest matched): they have
   * no stored rows in `stored`, and are neither compared nor validated.
   */
  constructor(
    inventory: WireInventory,
    kinds: readonly KindKey[],
    stored: ReadonlyMap<KindKey, ReadonlyMap<string, StoredRow>>,
    unchanged: ReadonlySet<KindKey> = new Set(),
  ) {
    this.#inventory = inventory;
    this.#stored = stored;
    this.#unchanged = unchanged;
    for (const kind of kinds) {
      if (inventory[kind] === undefined || unchanged.has(kind)) continue;
      if (VALIDATED_AS_WRITTEN.has(kind)) this.#unread.push(kind);
      else
        this.#read.set(
          kind,
          this.#timed(() => this.#readKind(kind)),
        );
    }
  }

  /**
   * A collected kind's rows, in the order sent (undefined: not collected).
   * The first call for a kind validated as written digests and keys its
   * rows.
   */
  rows(kind: KindKey): readonly IncomingRow[] | undefined {
    const read = this.#read.get(kind);
    if (read !== undefined) return read;
    if (this.#unchanged.has(kind) && this.#inventory[kind] !== undefined) {
      const rows = this.#timed(() => this.#readUnchanged(kind));
      this.#read.set(kind, rows);
      return rows;
    }
    const at = this.#unread.indexOf(kind);
    if (at < 0) return undefined;
    this.#unread.splice(at, 1);
    const rows = this.#timed(() => this.#readKind(kind));
    this.#read.set(kind, rows);
    return rows;
  }

  /**
   * Reads every kind not read yet and validates every changed row not
   * validated yet, or refuses: run before the commit, so that a malformed
   * row refuses the whole message even if no step read it (a duplicate
   * key's earlier row, a kind no step reached).
   */
  validateRest(): void {
    for (const kind of [...this.#unread]) this.rows(kind);
    for (const kind of this.#unchanged) this.#validateUnchanged(kind);
    for (const [kind, indexes] of this.#pending) {
      const valid = this.#validated[kind];
      const left = indexes.filter((i) => !valid?.has(i));
      if (left.length > 0) this.#validate(kind, left);
    }
  }

  /** Milliseconds spent reading and validating rows so far. */
  validationMs(): number {
    return this.#ms;
  }

  /**
   * The rows the series write reads after the commit (SyncResult): a new
   * or changed row as the schema validated it, an unchanged one as sent.
   * Its kinds are properties, as the series interface reads them: each is
   * read (an unchanged row parsed) only when the write asks for it, off the
   * sync's critical path, and once.
   */
  seriesRows(): SnapshotRows {
    const read = new Map<KindKey, unknown[] | undefined>();
    const kind = (key: 'workloads' | 'nodes' | 'pods') => {
      if (!read.has(key)) read.set(key, this.values(key));
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

  /** A collected kind's row values (IncomingRow.value), in the order sent. */
  values(kind: KindKey): unknown[] | undefined {
    return this.rows(kind)?.map((r) => r.value());
  }

  /** Times `fn` into the validation time (a read of a kind, a validation). */
  #timed<T>(fn: () => T): T {
    if (this.#timing) return fn();
    this.#timing = true;
    const started = performance.now();
    try {
      return fn();
    } finally {
      this.#ms += performance.now() - started;
      this.#timing = false;
    }
  }

  /**
   * One kind's rows: each digested and looked up among the stored ones, a
   * new or changed one validated now, or (VALIDATED_AS_WRITTEN) keyed from
   * its bytes and validated when first read.
   */
  #readKind(kind: KindKey): IncomingRow[] {
    const sentRows = this.#inventory[kind] as SentRows;
    const stored = this.#stored.get(kind);
    const def = KINDS[kind] as KindDefinition;
    const lazy =
      kind !== 'workloads' && (stored === undefined || stored.size === 0)
        ? new LazyDigests(kind, sentRows)
        : undefined;
    const digests =
      lazy === undefined ? digestSent(kind, sentRows, stored) : undefined;
    if (digests !== undefined) {
      this.#validateUnstored(
        kind,
        digests.flatMap((d, i) => (d.same === undefined ? [] : [i])),
      );
    }
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
    if (now.length > 0) this.#validate(kind, now);
    const valid = this.#validated[kind] ?? new Map<number, unknown>();
    const asSent: RowSource = {
      row: (i) => sentRows.value(i),
      members: (i, names) => sentRows.members(i, names),
    };
    const validatedLater: RowSource = { row: (i) => this.#row(kind, i) };
    const pending: number[] = [];
    const rows = Array.from({ length: sentRows.length }, (_, i) => {
      const d = lazy ?? (digests?.[i] as SentDigest);
      if (!(d instanceof LazyDigests) && d.same !== undefined) {
        return new IncomingRow(d.same.key, d, false, asSent, i);
      }
      const key = keys.get(i);
      if (key !== undefined) {
        pending.push(i);
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
    if (pending.length > 0) {
      this.#pending.set(kind, pending);
      this.#validated[kind] ??= new Map();
    }
    return rows;
  }

  /**
   * An unchanged kind's rows: each keyed from its bytes, taken as it was
   * sent and accepted before, its digest taken only if asked for.
   */
  #readUnchanged(kind: KindKey): IncomingRow[] {
    const sentRows = this.#inventory[kind] as SentRows;
    const def = KINDS[kind] as KindDefinition;
    this.#validateUnchanged(kind);
    const digests = new LazyDigests(kind, sentRows);
    const asSent: RowSource = {
      row: (i) => sentRows.value(i),
      members: (i, names) => sentRows.members(i, names),
    };
    return Array.from({ length: sentRows.length }, (_, i) => {
      // A row accepted before has its key members as strings.
      const key =
        keyAsSent(def, sentRows, i) ??
        naturalKey(def, sentRows.value(i) as DbRow);
      return new IncomingRow(key, digests, false, asSent, i);
    });
  }

  /**
   * The members its table does not store (KindDefinition.unstored) of the
   * rows at `indexes`, each validated on its own, or a refusal: the rows'
   * digests leave them out, so rows whose digests matched have them
   * unvalidated, and the series write reads them.
   */
  #validateUnstored(kind: KindKey, indexes: readonly number[]): void {
    const unstored = KINDS[kind].unstored;
    if (unstored === undefined || indexes.length === 0) return;
    this.#timed(() =>
      validateMembers(this.#inventory, kind, unstored, indexes),
    );
  }

  /** An unchanged kind's unstored members, validated once (#validateUnstored). */
  #validateUnchanged(kind: KindKey): void {
    const rows = this.#inventory[kind];
    if (rows === undefined || this.#unstoredValid.has(kind)) return;
    this.#validateUnstored(
      kind,
      Array.from({ length: rows.length }, (_, i) => i),
    );
    this.#unstoredValid.add(kind);
  }

  /** A changed row validated when first read, or a refusal. */
  #row(kind: KindKey, index: number): unknown {
    const valid = this.#validated[kind];
    if (valid?.has(index)) return valid.get(index);
    this.#validate(kind, [index]);
    return this.#validated[kind]?.get(index);
  }

  #validate(kind: KindKey, indexes: readonly number[]): void {
    this.#timed(() => {
      const out = validateRows(this.#inventory, { [kind]: indexes });
      const valid = this.#validated[kind] ?? new Map<number, unknown>();
      for (const [i, row] of out[kind] ?? []) valid.set(i, row);
      this.#validated[kind] = valid;
    });
  }
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

/**
 * Validates every row of the message, or refuses it: for a message refused
 * before any row is compared (an unknown tenant, another agent's subject),
 * so that a malformed row is named first, as when the whole schema ran
 * first.
 */
export function validateAllRows(inventory: WireInventory): void {
  const all: Partial<Record<KindKey, number[]>> = {};
  for (const kind of KIND_KEYS) {
    const rows = inventory[kind];
    if (rows !== undefined) {
      all[kind] = Array.from({ length: rows.length }, (_, i) => i);
    }
  }
  validateRows(inventory, all);
}
