/**
 * The digests of rows as sent: what content_hash (and a workload's
 * spec_facts_wire_hash) stores, so a resync knows an unchanged row by its
 * bytes without parsing it. Taken straight from the message's bytes
 * (SentRows), this file is the only part of the sync that reads them.
 */
import { createHash, hash as digest } from 'node:crypto';
import type { WireInventory } from '../wire/decode.ts';
import { WIRE_RULES_VERSION } from '../wire/inventory.ts';
import type { SentRows } from '../wire/sent-rows.ts';
import { KINDS, type KindKey, ROW_SHAPE_VERSION } from './kinds.ts';
import type { StoredRow } from './repo.ts';

/**
 * What makes two digests comparable: the row shape and the wire rules they
 * were taken under. A row's bytes that match a stored digest were accepted
 * by these very rules, so they are not validated again.
 */
const DIGEST_TAG = `${ROW_SHAPE_VERSION}.${WIRE_RULES_VERSION}:`;

/** How many bytes a kind digest gathers before it hashes them. */
const FLUSH_AT = 48 * 1024;

/**
 * A kind's digest, tagged: of its rows' bytes as sent (as their row digests
 * read them: the part the table stores, for a kind with `unstored` members),
 * where each row starts and ends, and how many there are, so equal digests
 * mean the same stored rows in the same order. Stored with the cluster (clusters.kind_digests), it
 * lets a resync that sent a kind's very rows again leave them unread: one
 * hash over the kind's bytes instead of one per row and a stored row each.
 */
export function kindDigest(kind: KindKey, rows: SentRows): string {
  const unstored = KINDS[kind].unstored;
  const hash = createHash('sha256').update(`${DIGEST_TAG}${rows.length}:`);
  if (unstored === undefined) {
    const { bytes, bounds } = rows.whole();
    hash
      .update(
        new Uint8Array(bounds.buffer, bounds.byteOffset, bounds.byteLength),
      )
      .update(bytes);
  } else {
    // Each row as its digest reads it (storedPart), after its length,
    // hashed a buffer's worth at a time.
    let at = 0;
    for (let i = 0; i < rows.length; i++) {
      if (unstored.length === 1) {
        at = putOneCut(at, rows, i, unstored);
      } else {
        const { prefix, parts, length } = storedPart(rows, i, unstored);
        at = put(at, `${prefix}${length}:`, parts);
      }
      if (at >= FLUSH_AT) {
        hash.update(cutBytes.subarray(0, at));
        at = 0;
      }
    }
    hash.update(cutBytes.subarray(0, at));
  }
  return DIGEST_TAG + hash.digest('base64');
}

/**
 * The kind digests of a snapshot's collected kinds that keep one (every
 * kind but one whose rows age out: `KindDefinition.agesOut`).
 */
export function kindDigests(
  inventory: WireInventory,
  kinds: readonly KindKey[],
): Map<KindKey, string> {
  const out = new Map<KindKey, string>();
  for (const kind of kinds) {
    const rows = inventory[kind];
    if (rows !== undefined && !KINDS[kind].agesOut) {
      out.set(kind, kindDigest(kind, rows));
    }
  }
  return out;
}

/**
 * The kinds a resync sent the very rows of that the cluster stores: their
 * kind digest is the one stored when they were last applied.
 */
export function unchangedKinds(
  sent: ReadonlyMap<KindKey, string>,
  stored: Readonly<Record<string, string>> | null,
): Set<KindKey> {
  const out = new Set<KindKey>();
  for (const [kind, digest] of sent) {
    if (stored?.[kind] === digest) out.add(kind);
  }
  return out;
}

/**
 * The kind digests to store once a snapshot is applied: the sent ones, the
 * stored ones of kinds it did not collect (their rows were left as they
 * were). None for a kind with a duplicate key (its rows are fewer than it
 * sent), and none at all when a namespace was pruned: the prune cascades
 * to the rows of every namespaced kind, collected or not, sent or not.
 */
export function kindDigestsToStore(
  stored: Readonly<Record<string, string>> | null,
  sent: ReadonlyMap<KindKey, string>,
  counts: Partial<Record<KindKey, { duplicates: number; pruned: number }>>,
): Record<string, string> {
  if ((counts.namespaces?.pruned ?? 0) > 0) return {};
  const out: Record<string, string> = { ...stored };
  for (const [kind, digest] of sent) {
    if ((counts[kind]?.duplicates ?? 0) > 0) delete out[kind];
    else out[kind] = digest;
  }
  return out;
}

/** Starts a digest no stored row has: its row is taken as changed. */
const UNMATCHED = 'unmatched:';

/**
 * The digest of bytes as sent, untagged. Equal digests, equal bytes, so an
 * equal row: SHA-256, as the digest decides what is validated, so a
 * collision must be out of reach, not only unlikely.
 */
function sha256(bytes: Uint8Array): string {
  return digest('sha256', bytes, 'base64');
}

/**
 * The untagged digest of row `i` as sent (every kind's but workloads'): of
 * the part its table stores, when the kind's rows carry members it does not
 * (storedPart).
 */
function sentDigest(kind: KindKey, rows: SentRows, i: number): string {
  const unstored = KINDS[kind].unstored;
  if (unstored === undefined) return sha256(rows.bytes(i));
  const { prefix, parts } = storedPart(rows, i, unstored);
  return sha256Of(prefix, parts);
}

/** Where nothing was cut, for a row the scan does not follow. */
const UNCUT = '*:';

/**
 * Row `i`'s bytes a digest is taken over when its kind's rows carry the
 * members `unstored` that the table does not store (KindDefinition.unstored):
 * the row's bytes without those members' values, after where each was cut
 * out. A row that changed only there has the same digest, so it is not
 * written; its stored columns are the same. The prefix makes the encoding
 * injective: it ends at its first colon, and says where the values were.
 * A row the scan does not follow is digested whole, under its own prefix.
 */
function storedPart(
  rows: SentRows,
  i: number,
  unstored: readonly string[],
): { prefix: string; parts: readonly Uint8Array[]; length: number } {
  const cut = rows.without(i, unstored);
  if (cut === undefined) {
    const bytes = rows.bytes(i);
    return { prefix: UNCUT, parts: [bytes], length: bytes.length };
  }
  return {
    prefix: `${cut.at.join(',')}:`,
    parts: cut.left,
    length: cut.length,
  };
}

/**
 * Bytes a cut row's digest (or a kind digest) is taken over, reused from
 * row to row (synchronously, so by one digest at a time): one native hash
 * call over a copy costs less than a hash object fed several pieces.
 */
let cutBytes = Buffer.allocUnsafe(64 * 1024);

/**
 * Writes `prefix` (ASCII), then `parts`, into cutBytes at `at`, growing it
 * (its bytes before `at` kept); returns where they end.
 */
function put(at: number, prefix: string, parts: readonly Uint8Array[]): number {
  let length = prefix.length;
  for (const part of parts) length += part.length;
  if (at + length > cutBytes.length) {
    const grown = Buffer.allocUnsafe(
      Math.max(at + length, 2 * cutBytes.length),
    );
    cutBytes.copy(grown, 0, 0, at);
    cutBytes = grown;
  }
  let end = at + cutBytes.write(prefix, at, 'latin1');
  for (const part of parts) {
    cutBytes.set(part, end);
    end += part.length;
  }
  return end;
}

/**
 * put(at, `${prefix}${length}:`, parts) of storedPart(rows, i, [name]),
 * written straight from the body: a kind digest's loop over every pod
 * makes no view, array or string per row.
 */
function putOneCut(
  at: number,
  rows: SentRows,
  i: number,
  name: readonly string[],
): number {
  const spans = rows.memberSpans(i, name);
  if (spans === undefined) {
    const bytes = rows.bytes(i);
    return put(at, `${UNCUT}${bytes.length}:`, [bytes]);
  }
  const start = rows.start(i);
  const end = rows.end(i);
  const span = spans[0] ?? null;
  const cutStart = span === null ? end : span.valueStart;
  const cutEnd = span === null ? end : span.valueEnd;
  const length = end - start - (cutEnd - cutStart);
  // The prefix: at most two numbers of 11 characters and two colons.
  reserve(at + 24 + length);
  let to = putInteger(at, span === null ? -1 : cutStart - start);
  cutBytes[to++] = COLON;
  to = putInteger(to, length);
  cutBytes[to++] = COLON;
  rows.copy(cutBytes, to, start, cutStart);
  to += cutStart - start;
  rows.copy(cutBytes, to, cutEnd, end);
  return to + (end - cutEnd);
}

const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;

/** Writes `n` (an integer) in decimal, as `${n}` spells it, at `at`. */
function putInteger(at: number, n: number): number {
  let to = at;
  if (n < 0) {
    cutBytes[to++] = MINUS;
    n = -n;
  }
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  for (let k = digits - 1; k >= 0; k--) {
    cutBytes[to + k] = ZERO + (n % 10);
    n = Math.floor(n / 10);
  }
  return to + digits;
}

/** Grows cutBytes to hold `length` bytes, its bytes kept. */
function reserve(length: number): void {
  if (length <= cutBytes.length) return;
  const grown = Buffer.allocUnsafe(Math.max(length, 2 * cutBytes.length));
  cutBytes.copy(grown);
  cutBytes = grown;
}

/** The untagged digest of `prefix` (ASCII), then `parts`. */
function sha256Of(prefix: string, parts: readonly Uint8Array[]): string {
  // put may replace cutBytes: read it after.
  const end = put(0, prefix, parts);
  return sha256(cutBytes.subarray(0, end));
}

/** Where the facts were cut out, for a row that has none. */
const NO_FACTS_CUT = '-:';
const NULL_BYTES = Buffer.from('null');

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
      hash: sha256Of(NO_FACTS_CUT, [rows.bytes(i)]),
      factsHash: sha256(NULL_BYTES),
    };
  }
  return {
    hash: sha256Of(`${cut.head.length}:`, [cut.head, cut.tail]),
    factsHash: sha256(cut.value),
  };
}

export interface SentDigest {
  /** The tagged digest, as content_hash stores it. */
  hash: string;
  factsHash: string | undefined;
  /** The stored row of the same bytes; undefined: the row is new or changed. */
  same: StoredRow | undefined;
}

/**
 * The digests of a kind's rows taken one by one when asked for: a kind the
 * cluster holds none of (a first sync's) has nothing to compare them with,
 * so each is taken only to be written, as its row is mapped, while the
 * database writes the rows before it. Not for workloads, whose two digests
 * are few.
 */
export class LazyDigests {
  readonly #kind: KindKey;
  readonly #rows: SentRows;

  constructor(kind: KindKey, rows: SentRows) {
    this.#kind = kind;
    this.#rows = rows;
  }

  /** Row `index`'s tagged digest, as content_hash stores it. */
  of(index: number): string {
    return DIGEST_TAG + sentDigest(this.#kind, this.#rows, index);
  }
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
 * validation.
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
      const hash = sentDigest(kind, rows, i);
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
