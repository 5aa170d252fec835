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
import { type KindKey, ROW_SHAPE_VERSION } from './kinds.ts';
import type { StoredRow } from './repo.ts';

/**
 * What makes two digests comparable: the row shape and the wire rules they
 * were taken under. A row's bytes that match a stored digest were accepted
 * by these very rules, so they are not validated again.
 */
const DIGEST_TAG = `${ROW_SHAPE_VERSION}.${WIRE_RULES_VERSION}:`;

/**
 * A kind's digest, tagged: of its rows' bytes as sent, where each row
 * starts and ends, and how many there are, so equal digests mean the same
 * rows in the same order. Stored with the cluster (clusters.kind_digests), it
 * lets a resync that sent a kind's very rows again leave them unread: one
 * hash over the kind's bytes instead of one per row and a stored row each.
 */
export function kindDigest(rows: SentRows): string {
  const { bytes, bounds } = rows.whole();
  return (
    DIGEST_TAG +
    createHash('sha256')
      .update(`${DIGEST_TAG}${rows.length}:`)
      .update(
        new Uint8Array(bounds.buffer, bounds.byteOffset, bounds.byteLength),
      )
      .update(bytes)
      .digest('base64')
  );
}

/**
 * The kind whose rows change between two snapshots of the same bytes: an
 * event ages out of the 24 h list as the snapshot time moves on, and the
 * retention sweep deletes events between syncs. It keeps no kind digest.
 */
const AGING_KIND: KindKey = 'events';

/** The kind digests of a snapshot's collected kinds that keep one. */
export function kindDigests(
  inventory: WireInventory,
  kinds: readonly KindKey[],
): Map<KindKey, string> {
  const out = new Map<KindKey, string>();
  for (const kind of kinds) {
    const rows = inventory[kind];
    if (rows !== undefined && kind !== AGING_KIND) {
      out.set(kind, kindDigest(rows));
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

/** Where the facts were cut out, for a row that has none. */
const NO_FACTS_CUT = '-:';
const NULL_BYTES = Buffer.from('null');
const NO_BYTES = new Uint8Array(0);

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
  readonly #rows: SentRows;

  constructor(rows: SentRows) {
    this.#rows = rows;
  }

  /** Row `index`'s tagged digest, as content_hash stores it. */
  of(index: number): string {
    return DIGEST_TAG + sentDigest(this.#rows, index);
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
