/**
 * One kind's write, and the order of work around it: `KindWriter.writeKind`
 * runs a kind's statements, its changed rows written by upsert chunks or by
 * COPY, and meanwhile prepares (and serializes) the kinds after it, so the
 * client's CPU work overlaps the database's instead of waiting on it. The
 * effect is that of writing each kind whole, one after the other, in the
 * spec's order.
 */
import { refusedDataOf } from '../db/errors.ts';
import type { Tx } from '../db/pool.ts';
import { RejectedInventoryError } from '../errors.ts';
import { copyChunks, type LinkIds } from './copy-text.ts';
import {
  type DbRow,
  KINDS,
  type KindDefinition,
  type KindKey,
} from './kinds.ts';
import type { PreparedKind } from './prepare.ts';
import { copyRows, listLinkIds, upsertRows } from './repo.ts';
import type { SpanRunner } from './sync.ts';
import { type ChangedRow, rowsJson, tableRow } from './table-rows.ts';

/**
 * How many changed rows one upsert statement carries. A large kind's rows
 * go in several statements, so the client maps and serializes the next
 * chunk while the database writes this one, instead of the database idling
 * through a whole kind's serialization (a large cluster's pods: ~9 MB of
 * JSON). The chunks are disjoint (a key is written once), so writing them
 * one after the other is the single upsert's effect.
 */
export const UPSERT_CHUNK_ROWS = 1000;

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
 * Whether a kind's changed rows are written by COPY: all of them new to a
 * cluster that holds none of the kind, so the upsert's conflict handling
 * would have nothing to do, and enough of them to pay for its round trip.
 */
export function writtenByCopy(prepared: PreparedKind): boolean {
  return (
    COPY_KINDS.has(prepared.kind) &&
    prepared.stored.size === 0 &&
    prepared.changed.length >= COPY_MIN_ROWS
  );
}

/**
 * A kind's statements, in order: `writeRows` writes its changed rows and
 * is called once among them.
 */
export type KindStep = (writeRows: () => Promise<void>) => Promise<void>;

export interface KindWriterOptions {
  /** Runs a named step (a tracing span in AWS). */
  span: SpanRunner;
  /**
   * The kinds with a span of their own: each is written inside it, with no
   * other kind's work overlapping, so the span carries its own work only.
   */
  spanOf: Partial<Record<KindKey, string>>;
}

/**
 * Writes the collected kinds of one sync, in the order given, each
 * prepared by `prepare` (once, maybe ahead of its turn).
 */
export class KindWriter {
  readonly #tx: Tx;
  readonly #clusterId: string;
  readonly #kinds: readonly KindKey[];
  readonly #prepare: (kind: KindKey) => PreparedKind;
  readonly #options: KindWriterOptions;
  /** Kinds prepared ahead of their turn, while the database wrote another. */
  readonly #ahead = new Map<KindKey, PreparedKind>();
  /**
   * A kind's statement texts (COPY text or upsert JSON, chunk by chunk)
   * built ahead, while the database wrote an earlier kind; otherwise each
   * chunk is built as the one before it is sent.
   */
  readonly #built = new Map<KindKey, string[]>();
  /** Link ids read for a copied kind, kept for the next one. */
  readonly #links: LinkIds = new Map();

  constructor(
    tx: Tx,
    clusterId: string,
    kinds: readonly KindKey[],
    prepare: (kind: KindKey) => PreparedKind,
    options: KindWriterOptions,
  ) {
    this.#tx = tx;
    this.#clusterId = clusterId;
    this.#kinds = kinds;
    this.#prepare = prepare;
    this.#options = options;
  }

  /** A kind's comparison with the stored rows, made now or made ahead. */
  prepared(kind: KindKey): PreparedKind {
    const prepared = this.#prepared(kind);
    this.#ahead.delete(kind);
    return prepared;
  }

  /**
   * Runs a kind's statements (`step`). While its rows are sent and
   * written, the next kind is prepared and the ones after it are built,
   * one at a time until the write is done.
   */
  async writeKind(prepared: PreparedKind, step: KindStep): Promise<void> {
    const { kind } = prepared;
    const index = this.#kinds.indexOf(kind);
    const following = this.#kinds[index + 1];
    const spanName = this.#options.spanOf[kind];
    if (spanName) {
      // Written, then the next one prepared: the span must not carry the
      // next kind's CPU.
      await this.#options.span(spanName, () =>
        step(() => this.#writeRows(prepared, () => {})),
      );
      if (following !== undefined) this.#prepared(following);
      return;
    }
    // The rows are on their way once the step first waits: the next kind
    // is prepared while they are sent and written.
    let sentAll = () => {};
    const sent = new Promise<void>((resolve) => {
      sentAll = resolve;
    });
    let written = false;
    const writing = step(() => this.#writeRows(prepared, sentAll)).finally(
      () => {
        written = true;
      },
    );
    writing.catch(() => {}); // awaited below, even if preparing throws
    if (following !== undefined) this.#prepared(following);
    // Once every row is sent, the database still writes them (a large
    // first sync's pods: some 100 ms): the following kinds' statements are
    // built meanwhile, one kind at a time until it is done. A kind with its
    // own span is left to its turn. A kind with no row to write has no such
    // wait: no turn of the event loop is spent on it.
    if (prepared.changed.length > 0) {
      await Promise.race([sent, writing.catch(() => {})]);
      for (const later of this.#kinds.slice(index + 1)) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        if (written || this.#options.spanOf[later]) break;
        this.#buildAhead(this.#prepared(later));
      }
    }
    await writing;
  }

  #prepared(kind: KindKey): PreparedKind {
    const early = this.#ahead.get(kind);
    if (early) return early;
    const prepared = this.#prepare(kind);
    this.#ahead.set(kind, prepared);
    return prepared;
  }

  /** Writes the changed rows; `sent` once the last of them is on its way. */
  async #writeRows(prepared: PreparedKind, sent: () => void): Promise<void> {
    const { kind, changed } = prepared;
    if (writtenByCopy(prepared)) {
      await this.#copy(prepared, sent);
    } else if (changed.length > 0) {
      await this.#upsert(
        kind,
        this.#built.get(kind) ?? upsertJsonChunks(kind, changed),
        sent,
      );
    } else {
      sent();
    }
  }

  /**
   * One statement per chunk of upsert JSON: each chunk is built while the
   * previous one is being written (one statement in flight at a time, on
   * the transaction's connection).
   */
  async #upsert(
    kind: KindKey,
    chunks: Iterable<string>,
    sent: () => void,
  ): Promise<void> {
    let writing: Promise<unknown> | undefined;
    const iterator = chunks[Symbol.iterator]();
    let chunk = iterator.next();
    while (!chunk.done) {
      const json = chunk.value;
      if (writing !== undefined) await writing;
      writing = upsertRows(this.#tx, kind, this.#clusterId, json).catch(
        (error: unknown) => {
          throw refusalOf(error, kind);
        },
      );
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
   * COPY: links resolved from the ids of the rows they point to (written
   * earlier in this sync: parents come first), each read once per sync.
   */
  async #copy(prepared: PreparedKind, sent: () => void): Promise<void> {
    const { kind } = prepared;
    const def = KINDS[kind] as KindDefinition;
    const missing = def.links.filter((l) => !this.#links.has(l));
    if (missing.length > 0) {
      const read = await listLinkIds(this.#tx, this.#clusterId, missing);
      for (const [link, ids] of read) this.#links.set(link, ids);
    }
    const chunks =
      this.#built.get(kind) ??
      copyChunks(kind, this.#clusterId, prepared.changed, this.#links);
    await copyRows(this.#tx, kind, chunks, sent).catch((error: unknown) => {
      throw refusalOf(error, kind);
    });
  }

  /**
   * Builds a kind's statement texts ahead of its write. A kind copied
   * needs the ids of its links: unless an earlier copy read them, its text
   * waits for its write.
   */
  #buildAhead(prepared: PreparedKind): void {
    const { kind, changed } = prepared;
    if (this.#built.has(kind) || changed.length === 0) return;
    if (writtenByCopy(prepared)) {
      const def = KINDS[kind] as KindDefinition;
      if (!def.links.every((l) => this.#links.has(l))) return;
      this.#built.set(kind, [
        ...copyChunks(kind, this.#clusterId, changed, this.#links),
      ]);
    } else {
      this.#built.set(kind, [...upsertJsonChunks(kind, changed)]);
    }
  }
}

/** The upsert's JSON of the changed rows, UPSERT_CHUNK_ROWS at a time. */
function* upsertJsonChunks(
  kind: KindKey,
  changed: readonly ChangedRow[],
): Generator<string> {
  const def = KINDS[kind] as KindDefinition;
  for (let start = 0; start < changed.length; start += UPSERT_CHUNK_ROWS) {
    const end = Math.min(changed.length, start + UPSERT_CHUNK_ROWS);
    const rows: DbRow[] = [];
    for (let i = start; i < end; i++) {
      rows.push(tableRow(def, changed[i] as ChangedRow));
    }
    yield rowsJson(rows);
  }
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
