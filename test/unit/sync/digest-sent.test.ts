/**
 * A resync knows an unchanged row by the digest of its bytes as sent: the
 * digests are the ones content_hash and spec_facts_wire_hash store (so a
 * change to how they are taken shows here), and a row matches a stored
 * one only when its bytes are the ones digested under the same tag.
 */
import { hash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  digestSent,
  kindDigest,
  type SentDigest,
} from '../../../shared/sync/digests.ts';
import { ROW_SHAPE_VERSION } from '../../../shared/sync/kinds.ts';
import type { StoredRow } from '../../../shared/sync/repo.ts';
import type { KindKey } from '../../../shared/wire/inventory.ts';
import { WIRE_RULES_VERSION } from '../../../shared/wire/inventory.ts';
import { SentRows } from '../../../shared/wire/sent-rows.ts';

const TAG = `${ROW_SHAPE_VERSION}.${WIRE_RULES_VERSION}:`;
const sha256 = (text: string) => hash('sha256', text, 'base64');

/** The rows a first sync of `values` stores, keyed by position. */
function storedOf(kind: KindKey, values: unknown[]): Map<string, StoredRow> {
  const digests = digestSent(kind, SentRows.fromValues(values), undefined);
  return new Map(
    digests.map((d: SentDigest, i) => [
      `k${i}`,
      {
        kind,
        id: String(i),
        key: `k${i}`,
        content_hash: d.hash,
        facts:
          d.factsHash === undefined
            ? null
            : {
                spec_facts_hash: null,
                spec_facts_at: null,
                spec_facts_wire_hash: d.factsHash,
              },
      },
    ]),
  );
}

describe('digestSent', () => {
  it('digests a row as its tagged SHA-256, and knows the stored row of the same bytes only', () => {
    // Prepare
    const rows = [{ name: 'a' }, { name: 'b', labels: { x: '"]' } }];
    const stored = storedOf('namespaces', rows);

    // Act
    const digests = digestSent(
      'namespaces',
      SentRows.fromValues([rows[1], { name: 'a', status: 'new' }, rows[0]]),
      stored,
    );

    // Assess
    expect(digests.map((d) => d.hash)).toEqual([
      TAG + sha256(JSON.stringify(rows[1])),
      TAG + sha256('{"name":"a","status":"new"}'),
      TAG + sha256(JSON.stringify(rows[0])),
    ]);
    expect(digests.map((d) => d.same?.id)).toEqual(['1', undefined, '0']);
    expect(digests[0]?.hash).toBe(stored.get('k1')?.content_hash);
  });

  it('matches nothing a digest taken under another tag names', () => {
    // Prepare
    const row = { name: 'a' };
    const untagged = sha256(JSON.stringify(row));
    const stored = storedOf('namespaces', [row]);
    const old = stored.get('k0') as StoredRow;
    old.content_hash = `3.1:${untagged}`;

    // Act
    const [digest] = digestSent(
      'namespaces',
      SentRows.fromValues([row]),
      stored,
    );

    // Assess
    expect(digest?.same).toBeUndefined();
    expect(digest?.hash).toBe(TAG + untagged);
  });

  it('digests a workload without its facts, prefixed by where they were cut, and its facts apart', () => {
    // Prepare
    const row = { kind: 'Deployment', name: 'w', spec_facts: { image: 'a' } };
    const bare = { kind: 'Deployment', name: 'v' };
    const stored = storedOf('workloads', [row, bare]);
    const moved = { ...row, spec_facts: { image: 'b' } };

    // Act
    const digests = digestSent(
      'workloads',
      SentRows.fromValues([row, bare, moved, 7]),
      stored,
    );

    // Assess
    const head = '{"kind":"Deployment","name":"w","spec_facts":';
    expect(digests[0]).toMatchObject({
      hash: TAG + sha256(`${Buffer.byteLength(head)}:${head}}`),
      factsHash: TAG + sha256('{"image":"a"}'),
    });
    expect(digests[0]?.same?.id).toBe('0');
    expect(digests[1]).toMatchObject({
      hash: TAG + sha256(`-:${JSON.stringify(bare)}`),
      factsHash: TAG + sha256('null'),
    });
    expect(digests[1]?.same?.id).toBe('1');
    // Facts only changed: the row digest is the stored one, yet no match.
    expect(digests[2]?.hash).toBe(digests[0]?.hash);
    expect(digests[2]?.factsHash).toBe(TAG + sha256('{"image":"b"}'));
    expect(digests[2]?.same).toBeUndefined();
    // No object: matches nothing, to be parsed and refused.
    expect(digests[3]).toEqual({
      hash: 'unmatched:',
      factsHash: undefined,
      same: undefined,
    });
  });

  it('digests a workload larger than the bytes it reuses, then a small one, alike', () => {
    // Prepare
    const big = { kind: 'Job', name: 'x'.repeat(100_000), spec_facts: [1] };
    const small = { kind: 'Job', name: 'y', spec_facts: [2] };
    const stored = storedOf('workloads', [big, small]);

    // Act
    const digests = digestSent(
      'workloads',
      SentRows.fromValues([small, big]),
      stored,
    );

    // Assess
    expect(digests.map((d) => d.same?.id)).toEqual(['1', '0']);
  });

  it('digests a pod without its usage, which k8s_pods does not store, prefixed by where it was cut', () => {
    // Prepare
    const row = {
      namespace: 'n',
      name: 'p',
      usage: { cpu_millicores: 1, memory_bytes: 2 },
      phase: 'Running',
    };
    const bare = { namespace: 'n', name: 'q', phase: 'Pending' };
    const stored = storedOf('pods', [row, bare]);
    const moved = { ...row, usage: { cpu_millicores: 9, memory_bytes: 8 } };
    const changed = { ...moved, phase: 'Failed' };
    const elsewhere = { namespace: 'n', name: 'p', phase: 'Running', usage: 1 };

    // Act
    const digests = digestSent(
      'pods',
      SentRows.fromValues([moved, bare, changed, elsewhere, { ...bare }]),
      stored,
    );

    // Assess
    const head = '{"namespace":"n","name":"p","usage":';
    expect(digests[0]?.hash).toBe(
      TAG + sha256(`${Buffer.byteLength(head)}:${head},"phase":"Running"}`),
    );
    expect(digests[0]?.same?.id).toBe('0');
    expect(digests[1]?.hash).toBe(TAG + sha256(`-1:${JSON.stringify(bare)}`));
    expect(digests.map((d) => d.same?.id)).toEqual([
      '0',
      '1',
      undefined, // another phase: a change it stores
      undefined, // the same members in another order: other bytes
      '1',
    ]);
  });

  it('keeps the usage of a node, whose table stores it, in its digest', () => {
    // Prepare
    const row = { name: 'n', usage: { cpu_millicores: 1, memory_bytes: 2 } };
    const stored = storedOf('nodes', [row]);
    const moved = { ...row, usage: { cpu_millicores: 3, memory_bytes: 2 } };

    // Act
    const [digest] = digestSent('nodes', SentRows.fromValues([moved]), stored);

    // Assess
    expect(digest?.hash).toBe(TAG + sha256(JSON.stringify(moved)));
    expect(digest?.same).toBeUndefined();
  });
});

describe('kindDigest', () => {
  it('is the same for pods whose usage alone moved, and for nodes only when nothing did', () => {
    // Prepare
    const pod = (cpu: number, phase = 'Running') => ({
      namespace: 'n',
      name: 'p',
      usage: { cpu_millicores: cpu, memory_bytes: 2 },
      phase,
    });
    const node = (cpu: number) => ({
      name: 'n',
      usage: { cpu_millicores: cpu, memory_bytes: 2 },
    });
    const pods = (...rows: unknown[]) =>
      kindDigest('pods', SentRows.fromValues(rows));
    const nodes = (...rows: unknown[]) =>
      kindDigest('nodes', SentRows.fromValues(rows));

    // Act, Assess
    expect(pods(pod(1), pod(2))).toBe(pods(pod(7), pod(8)));
    expect(pods(pod(1), pod(2))).not.toBe(pods(pod(1), pod(2, 'Failed')));
    expect(pods(pod(1), pod(2))).not.toBe(pods(pod(1)));
    expect(pods(pod(1), pod(2)).startsWith(TAG)).toBe(true);
    expect(nodes(node(1))).toBe(nodes(node(1)));
    expect(nodes(node(1))).not.toBe(nodes(node(2)));
  });

  it('digests a kind of more bytes than it gathers at once as its rows say', () => {
    // Prepare: rows past the bytes hashed at once, one changed near the end.
    const pod = (i: number, phase: string) => ({
      namespace: 'n',
      name: `p${i}-${'x'.repeat(2000)}`,
      usage: { cpu_millicores: i, memory_bytes: 2 },
      phase,
    });
    const rows = Array.from({ length: 200 }, (_, i) => pod(i, 'Running'));
    const later = rows.map((r) => ({ ...r, usage: null }));
    const changed = [...later];
    changed[190] = { ...pod(190, 'Failed'), usage: null };

    // Act
    const digest = (values: unknown[]) =>
      kindDigest('pods', SentRows.fromValues(values));

    // Assess
    expect(digest(later)).toBe(digest(rows));
    expect(digest(changed)).not.toBe(digest(rows));
  });

  it("hashes each pod's bytes without its usage after where it was cut and their length, as stored ones were", () => {
    // Prepare: usage cut out, absent, and a row with an escape (the
    // members read in JavaScript).
    const text = [
      '{"name":"a","usage":{"cpu_millicores":1},"phase":"Running"}',
      '{"name":"b","phase":"Pending"}',
      '{"name":"c\\u0041","usage" : null}',
    ] as const;
    const rows = new SentRows(Buffer.from(`[${text.join(',')}]`), {
      starts: [1, 2 + text[0].length, 3 + text[0].length + text[1].length],
      ends: [
        1 + text[0].length,
        2 + text[0].length + text[1].length,
        3 + text[0].length + text[1].length + text[2].length,
      ],
    });
    const a = '{"name":"a","usage":,"phase":"Running"}';
    const c = '{"name":"c\\u0041","usage" : }';
    const expected = `${TAG}${hash(
      'sha256',
      `${TAG}3:20:${a.length}:${a}-1:${text[1].length}:${text[1]}28:${c.length}:${c}`,
      'base64',
    )}`;

    // Act, Assess
    expect(kindDigest('pods', rows)).toBe(expected);
  });
});
