/**
 * The rows a sync reads, through explicit calls only: a kind validated as
 * written is read (digested, keyed) at its first `rows(kind)`, a changed
 * row validated at its first `value()`, and `validateRest()` refuses a
 * malformed row that no step read, with the whole schema's reason.
 */
import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { IncomingRows } from '../../../shared/sync/incoming.ts';
import type { KindKey } from '../../../shared/sync/kinds.ts';
import type { StoredRow } from '../../../shared/sync/repo.ts';
import {
  decodeInventoryJson,
  type WireInventory,
} from '../../../shared/wire/decode.ts';

const AGENT = '0b5e3a6c-1d2e-4f50-8a9b-0c1d2e3f4a5b';

/** A message of a node and namespaces, as an agent sends it. */
function message(namespaces: unknown[]): WireInventory {
  return decodeInventoryJson(
    JSON.stringify({
      type: 'kubernetes',
      schema_version: 1,
      agent_id: AGENT,
      timestamp: '2026-06-15T12:00:00Z',
      cluster: { name: 'c1' },
      nodes: [{ name: 'n1' }],
      namespaces,
    }),
  );
}

const KINDS: KindKey[] = ['nodes', 'namespaces'];
const NOTHING_STORED = new Map<KindKey, Map<string, StoredRow>>();

describe('IncomingRows', () => {
  it('reads each kind as asked, and gives a changed row validated and normalized', () => {
    // Prepare
    const incoming = new IncomingRows(
      message([{ name: 'a', labels: null }]),
      KINDS,
      NOTHING_STORED,
    );

    // Act
    const [row] = incoming.rows('namespaces') ?? [];

    // Assess
    expect(row?.key).toBe('a');
    expect(row?.changed).toBe(true);
    expect(row?.hash()).toMatch(/^\d+\.\d+:/);
    expect(row?.value()).toMatchObject({ name: 'a', labels: {} });
    expect(incoming.rows('pods')).toBeUndefined();
    expect(incoming.values('nodes')).toEqual([
      expect.objectContaining({ name: 'n1', roles: [] }),
    ]);
  });

  it('refuses, on validateRest, a malformed row no step read, as the whole schema does', () => {
    // Prepare: the namespaces are validated as written, and never read.
    const incoming = new IncomingRows(
      message([{ name: 'a' }, { name: 'b', workload_count: -1 }]),
      KINDS,
      NOTHING_STORED,
    );

    // Act
    let refusal: unknown;
    try {
      incoming.validateRest();
    } catch (error) {
      refusal = error;
    }

    // Assess
    expect(refusal).toBeInstanceOf(RejectedInventoryError);
    expect((refusal as RejectedInventoryError).reason).toBe(
      'namespaces[1].workload_count: must be at least 0',
    );
  });

  it('knows a row whose bytes are stored as unchanged, without validating it', () => {
    // Prepare: the stored digest is the one a first sync of the row took.
    const first = new IncomingRows(
      message([{ name: 'a' }]),
      KINDS,
      NOTHING_STORED,
    );
    const [sent] = first.rows('namespaces') ?? [];
    const stored = new Map<KindKey, Map<string, StoredRow>>([
      [
        'namespaces',
        new Map([
          [
            'a',
            {
              kind: 'namespaces',
              id: 'id-a',
              key: 'a',
              content_hash: sent?.hash() ?? '',
              facts: null,
            },
          ],
        ]),
      ],
    ]);

    // Act
    const resync = new IncomingRows(
      message([{ name: 'a' }, { name: 'b' }]),
      KINDS,
      stored,
    );
    const rows = resync.rows('namespaces') ?? [];

    // Assess
    expect(rows.map((r) => [r.key, r.changed])).toEqual([
      ['a', false],
      ['b', true],
    ]);
    // As sent: not normalized by the schema (no defaults filled in).
    expect(rows[0]?.value()).toEqual({ name: 'a' });
  });

  it('reads members of an unchanged row as sent and of a changed one as validated', () => {
    // Prepare: the first sync's digest of node a, stored.
    const nodes = (names: string[]) =>
      decodeInventoryJson(
        JSON.stringify({
          type: 'kubernetes',
          schema_version: 1,
          agent_id: AGENT,
          timestamp: '2026-06-15T12:00:00Z',
          cluster: { name: 'c1' },
          nodes: names.map((name) => ({
            name,
            addresses: [
              { type: 'InternalIP', address: `10.0.0.${name.length}` },
            ],
          })),
        }),
      );
    const first = new IncomingRows(nodes(['a']), ['nodes'], NOTHING_STORED);
    const [sent] = first.rows('nodes') ?? [];
    const stored = new Map<KindKey, Map<string, StoredRow>>([
      [
        'nodes',
        new Map([
          [
            'a',
            {
              kind: 'nodes',
              id: 'id-a',
              key: 'a',
              content_hash: sent?.hash() ?? '',
              facts: null,
            },
          ],
        ]),
      ],
    ]);

    // Act
    const resync = new IncomingRows(nodes(['a', 'bb']), ['nodes'], stored);
    const rows = resync.rows('nodes') ?? [];
    const read = rows.map((r) => r.members(['name', 'addresses', 'absent']));

    // Assess
    expect(rows.map((r) => r.changed)).toEqual([false, true]);
    expect(read).toEqual(
      rows.map((r) => {
        const value = r.value() as Record<string, unknown>;
        return [value.name, value.addresses, undefined];
      }),
    );
    expect(read[0]?.[1]).toEqual([{ type: 'InternalIP', address: '10.0.0.1' }]);
  });
});
