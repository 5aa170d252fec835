/**
 * A kind's digest (shared/sync/digests.ts kindDigest, clusters.kind_digests):
 * a resync that sends a kind's very rows again, in the same order, leaves
 * them unread. Every other case compares the kind row by row, so the stored
 * rows end as they would have without the digest: a changed, reordered or
 * duplicated kind, one left out and sent again, rows stored under other
 * rules, a namespace prune cascading into other kinds, the events.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { KIND_ORDER, KINDS, type KindKey } from '../../../shared/sync/kinds.ts';
import { type SyncResult, syncInventory } from '../../../shared/sync/sync.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  countRows,
  createTenant,
  dumpCluster,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');

/** The snapshot time of round `n`, five minutes apart. */
const at = (n: number) => new Date(T0 + n * 300_000).toISOString();

/** The kinds whose digest matched, as the sync reports them. */
function sameKinds(result: SyncResult): KindKey[] {
  return KIND_ORDER.filter((k) => result.kinds[k]?.sameDigest === true);
}

describe('kind digests', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  function cluster(seed: number) {
    const agentId = randomUUID();
    const inventory = generateInventory({
      seed,
      agentId,
      timestamp: at(0),
    }) as Inventory;
    return { agentId, inventory };
  }

  /** Syncs `inventory` stamped with round `n`'s time, processed then. */
  function sync(agentId: string, inventory: Inventory, n: number) {
    return syncInventory(
      database.db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      { ...inventory, timestamp: at(n) },
      { now: () => new Date(Date.parse(at(n)) + 1000) },
    );
  }

  /** Every kind's stored rows as text (not their ids nor versions). */
  async function storedRows(clusterId: string): Promise<string[]> {
    const out: string[] = [];
    for (const kind of KIND_ORDER) {
      const rows = await query<{ line: string }>(
        database.db,
        `select (to_jsonb(t) - 'id' - 'updated_at' - 'namespace_id'
                 - 'node_id' - 'workload_id' - 'host_id')::text as line
         from ${KINDS[kind].table} t where cluster_id = $1 order by 1`,
        [clusterId],
      );
      out.push(...rows.map((r) => `${kind} ${r.line}`));
    }
    return out;
  }

  /** The row counts each kind of `inventory` should leave stored. */
  function sentCounts(inventory: Inventory): Record<string, number> {
    return Object.fromEntries(
      KIND_ORDER.map((k) => [k, inventory[k]?.length ?? 0]),
    );
  }

  it('leaves a kind sent again unchanged unread and unwritten, every kind but the events', async () => {
    // Prepare
    const { agentId, inventory } = cluster(1);
    const first = await sync(agentId, inventory, 0);
    expect(sameKinds(first)).toEqual([]);
    const before = await dumpCluster(database.db, first.clusterId);

    // Act
    const again = await sync(agentId, inventory, 1);

    // Assess
    const present = KIND_ORDER.filter((k) => inventory[k] !== undefined);
    expect(sameKinds(again)).toEqual(present.filter((k) => k !== 'events'));
    for (const kind of present) {
      expect(again.kinds[kind]).toMatchObject({ upserted: 0, pruned: 0 });
      if (kind !== 'events') {
        expect(again.kinds[kind]?.received).toBe(inventory[kind]?.length);
      }
    }
    // No kind row written (the cluster row is, every sync).
    const after = await dumpCluster(database.db, first.clusterId);
    const rowsOnly = (dump: string[]) =>
      dump.filter((line) => !line.startsWith('cluster '));
    expect(rowsOnly(after)).toEqual(rowsOnly(before));
  });

  it('compares a changed kind row by row and writes its change, the other kinds left unread', async () => {
    // Prepare
    const { agentId, inventory } = cluster(2);
    await sync(agentId, inventory, 0);
    await sync(agentId, inventory, 1);
    const changed = structuredClone(inventory);
    const pod = changed.pods?.[3];
    if (!pod) throw new Error('the fixture has pods');
    pod.restart_count = (pod.restart_count ?? 0) + 7;

    // Act
    const result = await sync(agentId, changed, 2);

    // Assess
    expect(result.kinds.pods).toMatchObject({
      sameDigest: false,
      upserted: 1,
    });
    expect(result.kinds.services?.sameDigest).toBe(true);
    const stored = await queryOne<{ restart_count: number }>(
      database.db,
      'select restart_count from k8s_pods where cluster_id = $1 and namespace = $2 and name = $3',
      [result.clusterId, pod.namespace, pod.name],
    );
    expect(stored.restart_count).toBe(pod.restart_count);
    // And the new digest is kept: the same snapshot again leaves pods unread.
    const again = await sync(agentId, changed, 3);
    expect(again.kinds.pods?.sameDigest).toBe(true);
  });

  it('compares reordered rows row by row, writing nothing, and knows the new order next time', async () => {
    // Prepare
    const { agentId, inventory } = cluster(3);
    const first = await sync(agentId, inventory, 0);
    const before = await storedRows(first.clusterId);
    const reordered = {
      ...inventory,
      pods: [...(inventory.pods ?? [])].reverse(),
    };

    // Act
    const result = await sync(agentId, reordered, 1);
    const again = await sync(agentId, reordered, 2);

    // Assess
    expect(result.kinds.pods).toMatchObject({
      sameDigest: false,
      upserted: 0,
      unchanged: reordered.pods.length,
    });
    expect(again.kinds.pods?.sameDigest).toBe(true);
    expect(await storedRows(first.clusterId)).toEqual(before);
  });

  it('keeps a kind left out as it was, and knows it when it is sent again', async () => {
    // Prepare
    const { agentId, inventory } = cluster(4);
    const first = await sync(agentId, inventory, 0);
    const { services: _left, ...without } = inventory;

    // Act
    const leftOut = await sync(agentId, without as Inventory, 1);
    const back = await sync(agentId, inventory, 2);

    // Assess
    expect(leftOut.kinds.services).toBeUndefined();
    expect(back.kinds.services?.sameDigest).toBe(true);
    expect(await countRows(database.db, first.clusterId)).toEqual(
      sentCounts(inventory),
    );
  });

  it('rewrites every row stored under other rules (a ROW_SHAPE_VERSION or WIRE_RULES_VERSION bump)', async () => {
    // Prepare: the rows and digests as an older version stored them.
    const { agentId, inventory } = cluster(5);
    const first = await sync(agentId, inventory, 0);
    const retag = (digest: string) => digest.replace(/^[^:]*:/, '0.0:');
    for (const kind of KIND_ORDER) {
      await query(
        database.db,
        `update ${KINDS[kind].table} set content_hash = regexp_replace(content_hash, '^[^:]*:', '0.0:')
         where cluster_id = $1`,
        [first.clusterId],
      );
    }
    const { kind_digests: digests } = await queryOne<{
      kind_digests: Record<string, string>;
    }>(database.db, 'select kind_digests from clusters where id = $1', [
      first.clusterId,
    ]);
    await query(
      database.db,
      'update clusters set kind_digests = $2::jsonb where id = $1',
      [
        first.clusterId,
        JSON.stringify(
          Object.fromEntries(
            Object.entries(digests).map(([k, d]) => [k, retag(d)]),
          ),
        ),
      ],
    );

    // Act
    const result = await sync(agentId, inventory, 1);

    // Assess
    expect(sameKinds(result)).toEqual([]);
    for (const kind of KIND_ORDER) {
      const counts = result.kinds[kind];
      expect(counts?.upserted).toBe(counts?.received);
    }
    expect((await sync(agentId, inventory, 2)).kinds.pods?.sameDigest).toBe(
      true,
    );
  });

  it('keeps no digest when a pruned namespace took other kinds’ rows with it, so they are written again', async () => {
    // Prepare: a namespace the next snapshot drops while its pods, services
    // and the rest are sent as before (an agent between two lists).
    const { agentId, inventory } = cluster(6);
    const first = await sync(agentId, inventory, 0);
    const dropped = inventory.namespaces?.[0]?.name;
    if (dropped === undefined) throw new Error('the fixture has namespaces');
    const withoutNamespace = {
      ...inventory,
      namespaces: inventory.namespaces?.filter((n) => n.name !== dropped),
    };
    const podsIn = (inventory.pods ?? []).filter(
      (p) => p.namespace === dropped,
    ).length;
    expect(podsIn).toBeGreaterThan(0);

    // Act
    const pruned = await sync(agentId, withoutNamespace, 1);
    const counted = await countRows(database.db, first.clusterId);
    const next = await sync(agentId, withoutNamespace, 2);

    // Assess: the prune cascaded (pods left unread were deleted with their
    // namespace), then the next sync compared them and wrote them again.
    expect(pruned.kinds.namespaces?.pruned).toBe(1);
    expect(pruned.kinds.pods?.sameDigest).toBe(true);
    expect(counted.pods).toBe((inventory.pods?.length ?? 0) - podsIn);
    expect(sameKinds(next)).toEqual([]);
    expect(next.kinds.pods?.upserted).toBe(podsIn);
    expect(await countRows(database.db, first.clusterId)).toEqual(
      sentCounts(withoutNamespace as Inventory),
    );
  });

  it('keeps no digest for a kind with a duplicate key', async () => {
    // Prepare
    const { agentId, inventory } = cluster(7);
    const service = inventory.services?.[0];
    if (!service) throw new Error('the fixture has services');
    const doubled = {
      ...inventory,
      services: [...(inventory.services ?? []), structuredClone(service)],
    };
    await sync(agentId, doubled, 0);

    // Act
    const again = await sync(agentId, doubled, 1);

    // Assess
    expect(again.kinds.services).toMatchObject({
      sameDigest: false,
      duplicates: 1,
      received: inventory.services?.length,
      upserted: 0,
    });
  });

  it('compares the events row by row: one aged out since is dropped, one the sweep deleted is written again', async () => {
    // Prepare
    const { agentId, inventory } = cluster(8);
    const first = await sync(agentId, inventory, 0);
    const events = inventory.events ?? [];
    const [aging, swept] = events;
    if (!aging || !swept) throw new Error('the fixture has events');
    // Seen just inside the 24 h list now, out of it two rounds later.
    aging.last_seen = new Date(
      Date.parse(at(1)) - 24 * 3_600_000 + 1000,
    ).toISOString();
    await sync(agentId, inventory, 1);
    await query(
      database.db,
      'delete from k8s_events where cluster_id = $1 and namespace = $2 and name = $3',
      [first.clusterId, swept.namespace, swept.name],
    );

    // Act
    const result = await sync(agentId, inventory, 3);

    // Assess
    expect(result.kinds.events).toMatchObject({
      sameDigest: false,
      received: events.length - 1,
      upserted: 1,
      pruned: 1,
    });
    const names = await query<{ name: string }>(
      database.db,
      'select name from k8s_events where cluster_id = $1',
      [first.clusterId],
    );
    expect(names.map((r) => r.name)).toContain(swept.name);
    expect(names.map((r) => r.name)).not.toContain(aging.name);
  });
});
