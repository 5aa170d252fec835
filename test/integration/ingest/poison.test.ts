/**
 * Poison messages through the whole ingest path (NATS → bridge → SQS FIFO
 * with a dead-letter queue → sync handler → PostgreSQL): one bad snapshot
 * must never block another cluster, nor its own cluster for good.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { generateInventory } from '../../../shared/fixtures/generate.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { eventually, newAgentId, startWorld, type World } from './support.ts';

let world: World | undefined;

afterEach(async () => {
  await world?.stop();
  world = undefined;
});

function inventoryOf(agentId: string, at: Date): Inventory {
  return generateInventory({
    seed: agentId,
    agentId,
    clusterName: `cluster-${agentId.slice(0, 8)}`,
    timestamp: at.toISOString(),
    nodes: 2,
    namespaces: 1,
    workloadsPerNamespace: 1,
    podsPerWorkload: 1,
    networkPolicies: 1,
  });
}

const minutesAgo = (n: number) => new Date(Date.now() - n * 60_000);

/** A network policy selector `depth` objects deep, as raw JSON text. */
function deeplyNested(inventory: Inventory, depth: number): string {
  const marker = '"__deep__"';
  const withMarker = JSON.parse(JSON.stringify(inventory)) as {
    network_policies: { pod_selector: unknown }[];
  };
  withMarker.network_policies[0]!.pod_selector = '__deep__';
  return JSON.stringify(withMarker).replace(
    marker,
    `${'{"a":'.repeat(depth)}{}${'}'.repeat(depth)}`,
  );
}

describe('poison messages', () => {
  it('refuses a free-form object nested 5,000 deep naming its path, records it once, and holds back no one', {
    timeout: 180_000,
  }, async () => {
    // Prepare
    world = await startWorld({ maxReceiveCount: 3 });
    const a = newAgentId();
    const b = newAgentId();
    const poison = deeplyNested(inventoryOf(a, minutesAgo(3)), 5_000);
    expect(poison.length).toBeGreaterThan(25_000);

    // Act
    await world.publish(world.subjectFor(a), poison);
    await world.publish(world.subjectFor(b), inventoryOf(b, minutesAgo(2)));
    const nextA = inventoryOf(a, minutesAgo(1));
    await world.publish(world.subjectFor(a), nextA);

    // Assess
    await eventually('cluster B applied', () => world!.clusterOf(b));
    const clusterA = await eventually('cluster A applied', () =>
      world!.clusterOf(a),
    );
    expect(clusterA.last_snapshot_at.toISOString()).toBe(nextA.timestamp);
    const rows = await world.rejections();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ stage: 'sync', agent_id: a });
    expect(rows[0]!.reason).toMatch(
      /^network_policies\[0\]\.pod_selector(\.a)+: nested deeper than 16 levels/,
    );
    expect(rows[0]!.reason.length).toBeLessThan(400);
    // Refused on its first receive: never retried.
    const poisonRecords = world.processed.filter(
      (p) => p.outcome === 'rejected',
    );
    expect(poisonRecords).toHaveLength(1);
  });

  it('lets an unexpected failure hold back only its own cluster, records it on the last receive and moves it to the dead-letter queue', {
    timeout: 180_000,
  }, async () => {
    // Prepare: a fault only the poison snapshot's node meets.
    world = await startWorld({ maxReceiveCount: 3 });
    await world.database.db.query(`
      create function poison_node() returns trigger language plpgsql as $$
      begin
        if new.name = 'poison-node' then
          raise exception 'poison node refused by a test trigger';
        end if;
        return new;
      end $$;
      create trigger poison_node before insert on k8s_nodes
        for each row execute function poison_node();`);
    const a = newAgentId();
    const b = newAgentId();
    const poison = inventoryOf(a, minutesAgo(3));
    poison.nodes![0]!.name = 'poison-node';
    const nextA = inventoryOf(a, minutesAgo(1));

    // Act: the poison snapshot and B's travel in one batch.
    await world.publish(world.subjectFor(a), poison);
    await world.publish(world.subjectFor(b), inventoryOf(b, minutesAgo(2)));
    await world.publish(world.subjectFor(a), nextA);

    // Assess: B applies while A's poison snapshot is still being retried.
    await eventually('cluster B applied', () => world!.clusterOf(b));
    expect(await world.rejections()).toEqual([]);
    const rows = await eventually('the poison snapshot recorded', async () => {
      const r = await world!.rejections();
      return r.length > 0 && r;
    });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ stage: 'sync', agent_id: a });
    expect(rows[0]!.reason).toMatch(
      /^failed on each of 3 receives, moved to the dead-letter queue: .*poison node refused/,
    );
    const clusterA = await eventually('A’s next snapshot applied', () =>
      world!.clusterOf(a),
    );
    expect(clusterA.last_snapshot_at.toISOString()).toBe(nextA.timestamp);
    const nodeNames = await query<{ name: string }>(
      world.database.db,
      'select name from k8s_nodes where cluster_id = $1 order by name',
      [clusterA.id],
    );
    expect(nodeNames.map((n) => n.name)).not.toContain('poison-node');
    const dead = await eventually(
      'the poison snapshot in the DLQ',
      async () => {
        const { Messages = [] } = await world!.sqs.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: world!.sqs.deadLetterQueueUrl,
            MaxNumberOfMessages: 10,
            MessageAttributeNames: ['All'],
          }),
        );
        return Messages.length > 0 && Messages;
      },
    );
    expect(dead).toHaveLength(1);
    expect(
      dead[0]!.MessageAttributes?.[QueueAttribute.subject]?.StringValue,
    ).toBe(world.subjectFor(a));
  });
});
