import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { KIND_ORDER } from '../../../shared/sync/kinds.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory, mutateInventory } from '../../fixtures/generate.ts';
import { countRows } from '../../helpers/inventory-db.ts';
import { eventually, newAgentId, startWorld, type World } from './support.ts';

let world: World | undefined;

afterEach(async () => {
  await world?.stop();
  world = undefined;
});

function inventoryOf(
  agentId: string,
  overrides: Partial<Parameters<typeof generateInventory>[0]> = {},
): Inventory {
  return generateInventory({
    seed: agentId,
    agentId,
    clusterName: `cluster-${agentId.slice(0, 8)}`,
    timestamp: new Date(Date.now() - 60_000).toISOString(),
    ...overrides,
  });
}

/** Rows a snapshot leaves: all it carries but those of namespaces it lacks. */
function countsOf(inventory: Inventory): Record<string, number> {
  const namespaces = new Set(inventory.namespaces?.map((n) => n.name));
  return Object.fromEntries(
    KIND_ORDER.map((k) => {
      const rows = (inventory[k] ?? []) as { namespace?: string }[];
      return [
        k,
        rows.filter(
          (r) => r.namespace === undefined || namespaces.has(r.namespace),
        ).length,
      ];
    }),
  );
}

describe('ingest (NATS → bridge → SQS FIFO → sync handler → PostgreSQL)', () => {
  it('stores a published inventory', { timeout: 120_000 }, async () => {
    // Prepare
    world = await startWorld();
    const agentId = newAgentId();
    const inventory = inventoryOf(agentId);

    // Act
    await world.publish(world.subjectFor(agentId), inventory);
    const cluster = await eventually('the cluster row', () =>
      world!.clusterOf(agentId),
    );

    // Assess
    expect(cluster.name).toBe(inventory.cluster.name);
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      countsOf(inventory),
    );
    expect(world.processed.map((p) => p.outcome)).toEqual(['applied']);
  });

  it('carries a 3 MB inventory by claim check and stores it whole', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const agentId = newAgentId();
    const inventory = inventoryOf(agentId, {
      size: 'medium',
      podsPerWorkload: 6,
    });
    const bytes = Buffer.byteLength(JSON.stringify(inventory));
    expect(bytes).toBeGreaterThan(2.5 * 1024 * 1024);

    // Act
    await world.publish(world.subjectFor(agentId), inventory);
    const cluster = await eventually(
      'the cluster row',
      () => world!.clusterOf(agentId),
      120_000,
    );

    // Assess
    expect(world.ingest.bridge.stats().claimChecked).toBe(1);
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      countsOf(inventory),
    );
  });

  it('reads a gzip body', { timeout: 120_000 }, async () => {
    // Prepare
    world = await startWorld();
    const agentId = newAgentId();
    const inventory = inventoryOf(agentId);

    // Act
    await world.publish(world.subjectFor(agentId), inventory, { gzip: true });
    const cluster = await eventually('the cluster row', () =>
      world!.clusterOf(agentId),
    );

    // Assess
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      countsOf(inventory),
    );
  });

  it('reads a gzip body of several members as one inventory', {
    timeout: 120_000,
  }, async () => {
    // Prepare: the JSON compressed in parts, split around its timestamp
    // (how an agent may re-stamp a body it compressed once).
    world = await startWorld();
    const agentId = newAgentId();
    const inventory = inventoryOf(agentId);
    const text = JSON.stringify(inventory);
    const stamp = text.indexOf(inventory.timestamp);
    const parts = [
      text.slice(0, stamp),
      inventory.timestamp,
      text.slice(stamp + inventory.timestamp.length),
    ];
    const h = headers();
    h.set('Content-Encoding', 'gzip');

    // Act
    await jetstream(world.publisher).publish(
      world.subjectFor(agentId),
      Buffer.concat(parts.map((part) => gzipSync(part))),
      { headers: h, timeout: 30_000 },
    );
    const cluster = await eventually('the cluster row', () =>
      world!.clusterOf(agentId),
    );

    // Assess
    expect(world.processed.map((p) => p.outcome)).toEqual(['applied']);
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      countsOf(inventory),
    );
  });

  it('records a bad subject and a bad body once each, and retries neither', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const badSubject = `proxima.${world.tenant.clientSlug}.${world.tenant.envSlug}.not-a-uuid.kubernetes`;
    const agentId = newAgentId();
    const goodAfter = newAgentId();

    // Act
    const badSubjectSeq = await world.publish(
      badSubject,
      inventoryOf(newAgentId()),
    );
    const badBodySeq = await world.publish(
      world.subjectFor(agentId),
      '{"type": "kubernetes", "schema_version": 1, "agent_id": 42',
    );
    await world.publish(world.subjectFor(goodAfter), inventoryOf(goodAfter));
    await eventually('the later good inventory', () =>
      world!.clusterOf(goodAfter),
    );
    const rows = await eventually('both rejections', async () => {
      const r = await world!.rejections();
      return r.length >= 2 && r;
    });
    // Long enough for a retry loop to show itself.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // Assess
    expect(await world.rejections()).toHaveLength(2);
    const bridgeRow = rows.find((r) => r.stage === 'bridge');
    expect(bridgeRow).toMatchObject({
      subject: badSubject,
      stream_seq: badSubjectSeq,
      client_slug: world.tenant.clientSlug,
      env_slug: world.tenant.envSlug,
      agent_id: 'not-a-uuid',
    });
    expect(bridgeRow?.reason).toMatch(/agent_id .* is not a UUID/);
    const syncRow = rows.find((r) => r.stage === 'sync');
    expect(syncRow).toMatchObject({
      subject: world.subjectFor(agentId),
      stream_seq: badBodySeq,
      agent_id: agentId,
    });
    expect(syncRow?.reason).toMatch(/invalid JSON/);
    expect(await world.clusterOf(agentId)).toBeUndefined();
    expect(await world.streamBacklog()).toBe(0);
    expect(await world.queueDepth()).toBe(0);
  });

  it('records an inventory for an unknown tenant as rejected', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const agentId = newAgentId();

    // Act
    await world.publish(
      world.subjectFor(agentId, 'nobody', 'nowhere'),
      inventoryOf(agentId),
    );
    const rows = await eventually('the rejection', async () => {
      const r = await world!.rejections();
      return r.length > 0 && r;
    });

    // Assess
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      stage: 'sync',
      client_slug: 'nobody',
      env_slug: 'nowhere',
    });
    expect(rows[0]?.reason).toMatch(/unknown client or environment/);
  });

  it('applies two snapshots of one cluster published back to back in order, and never rewinds to an older one', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const agentId = newAgentId();
    // The later one five minutes after: both in the past, none clamped.
    const first = inventoryOf(agentId, {
      timestamp: new Date(Date.now() - 10 * 60_000).toISOString(),
    });
    const second = mutateInventory(first, {
      changeFraction: 0.2,
      removeFraction: 0.1,
    });
    const subject = world.subjectFor(agentId);

    // Act
    const firstSeq = await world.publish(subject, first);
    const secondSeq = await world.publish(subject, second);
    await eventually('both snapshots', () => world!.processed.length === 2);
    const staleSeq = await world.publish(subject, first);
    await eventually('the late copy', () => world!.processed.length === 3);

    // Assess
    expect(world.processed.map((p) => [p.streamSeq, p.outcome])).toEqual([
      [firstSeq, 'applied'],
      [secondSeq, 'applied'],
      [staleSeq, 'skipped_not_newer'],
    ]);
    const cluster = await world.clusterOf(agentId);
    expect(cluster?.last_snapshot_at.toISOString()).toBe(
      new Date(second.timestamp).toISOString(),
    );
    expect(await countRows(world.database.db, cluster!.id)).toEqual(
      countsOf(second),
    );
  });
});
