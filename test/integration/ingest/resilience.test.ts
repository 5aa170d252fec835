import { afterEach, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { generateInventory } from '../../../shared/fixtures/generate.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { eventually, newAgentId, startWorld, type World } from './support.ts';

let world: World | undefined;

afterEach(async () => {
  await world?.stop();
  world = undefined;
});

function inventoryOf(agentId: string, minutesAgo = 1): Inventory {
  return generateInventory({
    seed: agentId,
    agentId,
    clusterName: `cluster-${agentId.slice(0, 8)}`,
    timestamp: new Date(Date.now() - minutesAgo * 60_000).toISOString(),
  });
}

async function changeRecordCount(w: World): Promise<number> {
  const [row] = await query<{ n: number }>(
    w.database.db,
    'select count(*)::int as n from change_events',
  );
  return row?.n ?? 0;
}

describe('ingest resilience', () => {
  it('loses nothing and applies nothing twice while the queue is unreachable for a while', {
    timeout: 240_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const agents = [newAgentId(), newAgentId(), newAgentId()];

    // Act
    await world.relay.cut();
    const published: number[] = [];
    for (const agentId of agents) {
      published.push(
        await world.publish(world.subjectFor(agentId), inventoryOf(agentId)),
      );
    }
    // A second snapshot of the first cluster, queued behind the first.
    const first = agents[0]!;
    published.push(
      await world.publish(world.subjectFor(first), inventoryOf(first, 0.5)),
    );
    await eventually(
      'the bridge to fail sending',
      () => world!.ingest.bridge.stats().sendFailures > 0,
    );
    await eventually(
      'the poller to notice',
      () => !world!.ingest.poller.healthy(),
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    await world.relay.restore();
    await eventually(
      'every snapshot to be settled',
      () => world!.processed.length >= published.length,
      120_000,
    );
    // Long enough for any duplicate to show up.
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // Assess
    expect(world.processed.filter((p) => p.outcome === 'applied')).toHaveLength(
      published.length,
    );
    expect(world.processed.map((p) => p.streamSeq).sort()).toEqual(
      [...published].sort(),
    );
    for (const agentId of agents) {
      expect(await world.clusterOf(agentId)).toBeDefined();
    }
    expect(await world.rejections()).toEqual([]);
    expect(await world.streamBacklog()).toBe(0);
    expect(await world.queueDepth()).toBe(0);
  });

  it('applies a snapshot once when the bridge dies between the send and the ack', {
    timeout: 240_000,
  }, async () => {
    // Prepare: the running bridge sends, then "dies" before acking.
    world = await startWorld();
    await world.ingest.bridge.stop();
    let died = false;
    const doomed = await world.startBridge({
      afterSend: async () => {
        died = true;
        throw new Error('killed between send and ack');
      },
    });
    const agentId = newAgentId();

    // Act
    const seq = await world.publish(
      world.subjectFor(agentId),
      inventoryOf(agentId),
    );
    await eventually('the send before the death', () => died);
    await doomed.stop();
    const cluster = await eventually('the cluster row', () =>
      world!.clusterOf(agentId),
    );
    const recordsAfterFirst = await changeRecordCount(world);
    // The stream redelivers after ack_wait to a restarted bridge.
    const restarted = await world.startBridge();
    await eventually(
      'the redelivery to be acked',
      async () => (await world!.streamBacklog()) === 0,
      90_000,
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    // Assess
    expect(restarted.stats().forwarded).toBe(1);
    const applied = world.processed.filter(
      (p) => p.streamSeq === seq && p.outcome === 'applied',
    );
    expect(applied).toHaveLength(1);
    const after = await world.clusterOf(agentId);
    expect(after?.updated_at).toEqual(cluster.updated_at);
    expect(await changeRecordCount(world)).toBe(recordsAfterFirst);
    expect(await world.queueDepth()).toBe(0);
  });
});
