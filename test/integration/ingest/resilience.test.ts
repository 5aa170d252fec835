import { createServer, type Socket } from 'node:net';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import {
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
} from '../../../infra/local/ingest.ts';
import { query } from '../../../shared/db/pool.ts';
import {
  armFault,
  disarmFaults,
  InjectedFault,
} from '../../../shared/faults.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createSqsClient } from '../../helpers/sqs.ts';
import { tinyInventory } from '../../helpers/tiny-inventory.ts';
import { eventually, newAgentId, startWorld, type World } from './support.ts';

let world: World | undefined;

afterEach(async () => {
  disarmFaults();
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
    const disarm = armFault('bridge.after-send', () => {
      died = true;
      throw new InjectedFault(
        'bridge.after-send',
        'killed between send and ack',
      );
    });
    const doomed = await world.startBridge();
    const agentId = newAgentId();

    // Act
    const seq = await world.publish(
      world.subjectFor(agentId),
      inventoryOf(agentId),
    );
    await eventually('the send before the death', () => died);
    await doomed.stop();
    disarm();
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

  it("keeps a cluster's order across a bridge killed with snapshots in flight: one change record per transition", {
    timeout: 240_000,
  }, async () => {
    // Prepare: the cluster applied once at image 1.0.0.
    world = await startWorld();
    const agentId = newAgentId();
    const start = Date.now();
    const snapshot = (i: number) => {
      const inventory = tinyInventory(
        agentId,
        new Date(start - (10 - i) * 60_000),
        { specFacts: true },
      );
      const container = inventory.workloads?.[0]?.spec_facts?.containers[0];
      if (!container) throw new Error('fixture has a container');
      container.image = `registry.example.com/shop/web:1.0.${i}`;
      return inventory;
    };
    await world.publish(world.subjectFor(agentId), snapshot(0));
    await eventually('the first snapshot applied', () =>
      world!.clusterOf(agentId),
    );
    await world.ingest.bridge.stop();
    // A queue that takes the connection and never answers: sends hang.
    const hung = new Set<Socket>();
    const silent = createServer((socket) => {
      hung.add(socket);
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) =>
      silent.listen(0, '127.0.0.1', () => resolve()),
    );
    const port = (silent.address() as { port: number }).port;
    const hungSqs = createSqsClient(`http://127.0.0.1:${port}`);
    const doomedConnection = await connect({ servers: world.nats.url });
    await world.startBridge({ nats: doomedConnection, sqs: hungSqs });
    try {
      // Act: three snapshots pulled by the doomed bridge, which is then
      // killed (its connection gone, nothing acked), and a fourth after.
      for (const i of [1, 2, 3]) {
        await world.publish(world.subjectFor(agentId), snapshot(i));
      }
      await eventually('three held by the doomed bridge', async () => {
        const jsm = await jetstreamManager(world!.publisher);
        const info = await jsm.consumers.info(DEFAULT_STREAM, DEFAULT_CONSUMER);
        return info.num_ack_pending === 3;
      });
      await doomedConnection.close();
      await world.publish(world.subjectFor(agentId), snapshot(4));
      await world.startBridge();
      const last = snapshot(4).timestamp;
      await eventually(
        'the last snapshot applied',
        async () =>
          (await world!.clusterOf(agentId))?.last_snapshot_at.toISOString() ===
          last,
        90_000,
      );
      await eventually(
        'everything acked',
        async () => (await world!.streamBacklog()) === 0,
        90_000,
      );

      // Assess: each transition recorded once, in order; none folded.
      const rows = await query<{ summary: string }>(
        world.database.db,
        `select summary from change_events
          where details ->> 'cluster_id' = $1
          order by coalesce(scanned_at, created_at)`,
        [(await world.clusterOf(agentId))!.id],
      );
      expect(
        rows.map((r) => /1\.0\.(\d) → 1\.0\.(\d)/.exec(r.summary)?.slice(1)),
      ).toEqual([
        ['0', '1'],
        ['1', '2'],
        ['2', '3'],
        ['3', '4'],
      ]);
      expect(
        world.processed.filter((p) => p.outcome === 'skipped_not_newer'),
      ).toEqual([]);
    } finally {
      for (const socket of hung) socket.destroy();
      silent.close();
      hungSqs.destroy();
    }
  });
});
