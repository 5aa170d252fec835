/**
 * A pod's usage (wire v1.1, from metrics-server) moves at nearly every sync
 * and k8s_pods does not store it: a resync whose pods changed only there
 * writes no pod row and keeps the pods' kind digest, while the series
 * write reads each pod's new usage. A node's usage is stored (usage_*): its
 * move is written. A usage value the schema refuses still refuses the
 * message, though the rest of its pod was accepted before.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { seriesOfSnapshot } from '../../../shared/metrics/series.ts';
import { type SyncResult, syncInventory } from '../../../shared/sync/sync.ts';
import { decodeInventoryJson } from '../../../shared/wire/decode.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory, mutateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { wholeReason } from '../../helpers/whole-reason.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');

/** The snapshot time of round `n`, five minutes apart. */
const at = (n: number) => new Date(T0 + n * 300_000).toISOString();

type Pod = NonNullable<Inventory['pods']>[number];

/** Round `n` of a cluster: nothing stored changed, every pod's usage moved. */
function round(inventory: Inventory, n: number): Inventory {
  return mutateInventory(inventory, {
    seed: n,
    changeFraction: 0,
    removeFraction: 0,
    timestamp: at(n),
  });
}

/** Each pod's usage as the series write reads it, by namespace/name. */
function seriesUsage(result: SyncResult): Map<string, unknown> {
  return new Map(
    (result.seriesRows.pods ?? []).map((p) => [
      `${p.namespace}/${p.name}`,
      p.usage ?? null,
    ]),
  );
}

/** Each pod's usage as sent, by namespace/name. */
function sentUsage(inventory: Inventory): Map<string, unknown> {
  return new Map(
    (inventory.pods ?? []).map((p) => [
      `${p.namespace}/${p.name}`,
      p.usage ?? null,
    ]),
  );
}

describe('pod usage, which k8s_pods does not store', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  /** A cluster synced once, its pods carrying usage. */
  async function cluster(seed: number) {
    const agentId = randomUUID();
    const generated = generateInventory({
      seed,
      agentId,
      timestamp: at(0),
    }) as Inventory;
    const first = round(generated, 0);
    const result = await sync(JSON.stringify(first));
    return { first, clusterId: result.clusterId };
  }

  /** Syncs a message as an agent sends it, as bytes. */
  function sync(json: string) {
    const wire = decodeInventoryJson(json);
    return syncInventory(
      database.db,
      {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        agentId: wire.agent_id,
      },
      wire,
      { now: () => new Date(Date.parse(wire.timestamp) + 1000) },
    );
  }

  /** Each stored pod's row version (xmin): a write changes it. */
  async function podVersions(clusterId: string): Promise<string[]> {
    const rows = await query<{ line: string }>(
      database.db,
      `select namespace || '/' || name || ' ' || xmin::text as line
       from k8s_pods where cluster_id = $1 order by 1`,
      [clusterId],
    );
    return rows.map((r) => r.line);
  }

  it('writes no pod row when only the pods’ usage moved, keeps the kind skip, and the series read the new usage', async () => {
    // Prepare
    const { first, clusterId } = await cluster(11);
    const running = (first.pods ?? []).filter((p) => p.phase === 'Running');
    expect(running.length).toBeGreaterThan(0);
    const before = await podVersions(clusterId);
    const second = round(first, 1);
    const third = round(first, 2);
    expect(sentUsage(second)).not.toEqual(sentUsage(first));

    // Act: the first resync matches the pods' kind digest; the second,
    // its cluster's kind digests dropped (as a namespace prune drops them),
    // compares the pods row by row.
    const byKind = await sync(JSON.stringify(second));
    await query(
      database.db,
      'update clusters set kind_digests = null where id = $1',
      [clusterId],
    );
    const byRow = await sync(JSON.stringify(third));

    // Assess
    const pods = first.pods?.length ?? 0;
    expect(byRow.kinds.pods).toMatchObject({
      received: pods,
      upserted: 0,
      unchanged: pods,
      sameDigest: false,
    });
    expect(byKind.kinds.pods).toMatchObject({
      received: pods,
      upserted: 0,
      sameDigest: true,
    });
    expect(await podVersions(clusterId)).toEqual(before);
    expect(seriesUsage(byKind)).toEqual(sentUsage(second));
    expect(seriesUsage(byRow)).toEqual(sentUsage(third));
    // The samples derived from them carry it too.
    const pod = running[0] as Pod;
    const usage = second.pods?.find(
      (p) => p.namespace === pod.namespace && p.name === pod.name,
    )?.usage;
    const sample = seriesOfSnapshot(byKind.seriesRows, {
      clusterId,
      environmentId: tenant.environmentId,
    }).find(
      (s) =>
        s.name === 'pod_memory_working_set_bytes' &&
        s.labels.namespace === pod.namespace &&
        s.labels.pod === pod.name,
    );
    expect(sample?.value).toBe(usage?.memory_bytes);
  });

  it('writes a pod that really changed beside the usage moves, and only that one', async () => {
    // Prepare
    const { first, clusterId } = await cluster(12);
    await sync(JSON.stringify(round(first, 1))); // usage moved only
    const next = round(first, 2);
    const changed = next.pods?.[5] as Pod;
    changed.restart_count = (changed.restart_count ?? 0) + 3;
    const before = await podVersions(clusterId);

    // Act
    const result = await sync(JSON.stringify(next));

    // Assess
    expect(result.kinds.pods).toMatchObject({
      upserted: 1,
      unchanged: (next.pods?.length ?? 0) - 1,
      sameDigest: false,
    });
    const after = await podVersions(clusterId);
    const moved = after.filter((line) => !before.includes(line));
    expect(moved.map((line) => line.split(' ')[0])).toEqual([
      `${changed.namespace}/${changed.name}`,
    ]);
    const stored = await queryOne<{ restart_count: number }>(
      database.db,
      'select restart_count from k8s_pods where cluster_id = $1 and namespace = $2 and name = $3',
      [clusterId, changed.namespace, changed.name],
    );
    expect(stored.restart_count).toBe(changed.restart_count);
    expect(seriesUsage(result)).toEqual(sentUsage(next));
  });

  it('writes a node whose usage alone moved: nodes store it', async () => {
    // Prepare
    const { first, clusterId } = await cluster(13);
    const next = round(first, 1);
    const node = next.nodes?.[0];
    if (!node) throw new Error('the fixture has nodes');
    node.usage = {
      cpu_millicores: (node.usage?.cpu_millicores ?? 0) + 123,
      memory_bytes: node.usage?.memory_bytes ?? null,
    };

    // Act
    const result = await sync(JSON.stringify(next));

    // Assess
    expect(result.kinds.nodes).toMatchObject({ upserted: 1 });
    const stored = await queryOne<{ usage_cpu_millicores: number }>(
      database.db,
      'select usage_cpu_millicores from k8s_nodes where cluster_id = $1 and name = $2',
      [clusterId, node.name],
    );
    expect(stored.usage_cpu_millicores).toBe(node.usage.cpu_millicores);
  });

  it('refuses a usage the schema refuses, on a pod otherwise as stored, row by row and by kind digest alike', async () => {
    // Prepare
    const { first, clusterId } = await cluster(14);
    const stored = round(first, 1);
    await sync(JSON.stringify(stored)); // stores the kind digest
    const before = await podVersions(clusterId);
    const bad = (n: number, base: Inventory) => {
      const next = round(base, n);
      (next.pods?.[4] as { usage: unknown }).usage = {
        cpu_millicores: -5,
        memory_bytes: 1,
      };
      (next.pods?.[6] as { usage: unknown }).usage = 'high';
      return JSON.stringify(next);
    };
    // One pod really changed: the pods are compared row by row.
    const changedPod = structuredClone(first);
    const pod = changedPod.pods?.[0] as Pod;
    pod.restart_count = (pod.restart_count ?? 0) + 1;
    const messages = [bad(2, first), bad(3, changedPod)];

    for (const json of messages) {
      const whole = wholeReason(json);
      expect(whole).toBe(
        'pods[4].usage.cpu_millicores: must be at least 0; pods[6].usage: expected an object',
      );

      // Act
      const result = sync(json);

      // Assess
      await expect(result).rejects.toBeInstanceOf(RejectedInventoryError);
      await expect(result).rejects.toMatchObject({ reason: whole });
    }
    expect(await podVersions(clusterId)).toEqual(before);
  });
});
