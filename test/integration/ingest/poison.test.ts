/**
 * Poison messages through the whole ingest path (NATS → bridge → SQS FIFO
 * with a dead-letter queue → sync handler → PostgreSQL): one bad snapshot
 * must never block another cluster, nor its own cluster for good.
 */

import { gzipSync } from 'node:zlib';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { jetstream } from '@nats-io/jetstream';
import { headers } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { installPoisonNode } from '../../helpers/poison-node.ts';
import { captureStdout } from '../sweeps/support.ts';
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
    await installPoisonNode(world.database.db);
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

  it('refuses hostile text naming the field and the rule: bounded, never quoting it, in the table or the log', {
    timeout: 180_000,
  }, async () => {
    // Prepare
    world = await startWorld();
    const longKey = newAgentId();
    const notJson = newAgentId();
    const nul = newAgentId();
    const surrogate = newAgentId();
    const encoding = newAgentId();
    const withLongKey = inventoryOf(longKey, minutesAgo(1));
    withLongKey.pods![0]!.labels = { [`secretkey${'k'.repeat(1 << 20)}`]: 'v' };
    const withNul = inventoryOf(nul, minutesAgo(1));
    withNul.pods![0]!.labels = { app: 'ab\u0000cd' };
    const withSurrogate = inventoryOf(surrogate, minutesAgo(1));
    withSurrogate.workloads![0]!.name = 'web\ud800x';
    const out = captureStdout();

    // Act
    try {
      await world.publish(world.subjectFor(longKey), withLongKey);
      await world.publish(
        world.subjectFor(notJson),
        'this is not json, secretbody',
      );
      await world.publish(world.subjectFor(nul), withNul);
      await world.publish(world.subjectFor(surrogate), withSurrogate);
      const h = headers();
      h.set('Content-Encoding', 'secret-encoding');
      await jetstream(world.publisher).publish(
        world.subjectFor(encoding),
        Buffer.from(JSON.stringify(inventoryOf(encoding, minutesAgo(1)))),
        { headers: h },
      );
      await eventually('five rejections', async () => {
        const r = await world!.rejections();
        return r.length >= 5 && r;
      });
    } finally {
      out.restore();
    }

    // Assess
    const reasons = Object.fromEntries(
      (await world.rejections()).map((r) => [r.agent_id, r.reason]),
    );
    expect(reasons[longKey]).toBe(
      'pods[0].labels[a key of 1048585 characters]: invalid key: longer than 317 characters',
    );
    expect(reasons[notJson]).toBe('body: invalid JSON (not JSON syntax)');
    expect(reasons[nul]).toBe(
      'pods[0].labels.app: must not contain a NUL character',
    );
    expect(reasons[surrogate]).toBe(
      'workloads[0].name: must not contain a lone surrogate',
    );
    expect(reasons[encoding]).toBe(
      'header Content-Encoding: unsupported (gzip or none)',
    );
    for (const agent of [longKey, notJson, nul, surrogate, encoding]) {
      expect(await world.clusterOf(agent)).toBeUndefined();
    }
    const logged = out.json().map((line) => JSON.stringify(line));
    expect(logged.length).toBeGreaterThan(0);
    for (const line of logged) {
      expect(line.length).toBeLessThan(5_000);
      expect(line).not.toMatch(/secretkey|secretbody|secret-encoding/);
    }
  });

  it('counts and logs rows sharing a key in one snapshot, per kind, with a metric, keeping the last', {
    timeout: 180_000,
  }, async () => {
    // Prepare: one pod, node, workload and namespace sent twice.
    world = await startWorld();
    const agent = newAgentId();
    const inventory = inventoryOf(agent, minutesAgo(1));
    const pod = inventory.pods![0]!;
    const node = inventory.nodes![0]!;
    const workload = inventory.workloads![0]!;
    const namespace = inventory.namespaces![0]!;
    inventory.pods!.push({ ...pod, labels: { copy: 'last' } });
    inventory.nodes!.push({ ...node });
    inventory.workloads!.push({ ...workload });
    inventory.namespaces!.push({ ...namespace });
    const out = captureStdout();

    // Act
    let cluster: Awaited<ReturnType<World['clusterOf']>>;
    try {
      await world.publish(world.subjectFor(agent), inventory);
      cluster = await eventually('the cluster applied', () =>
        world!.clusterOf(agent),
      );
      await eventually(
        'the duplicates metric',
        () =>
          out.metric('proxima_k8s_snapshot_duplicate_rows_total').length >= 4,
      );
    } finally {
      out.restore();
    }

    // Assess
    const warned = out
      .json()
      .filter(
        (l) =>
          l.message ===
          'kubernetes snapshot carries one key more than once; the last row kept',
      );
    const byKind = Object.fromEntries(warned.map((l) => [l.kind, l]));
    expect(Object.keys(byKind).sort()).toEqual([
      'namespaces',
      'nodes',
      'pods',
      'workloads',
    ]);
    expect(byKind.pods).toMatchObject({
      level: 'WARN',
      subject: world.subjectFor(agent),
      duplicates: 1,
      keys: [`${pod.namespace}/${pod.name}`],
    });
    expect(byKind.nodes).toMatchObject({ duplicates: 1, keys: [node.name] });
    expect(byKind.workloads).toMatchObject({
      duplicates: 1,
      keys: [`${workload.kind}/${workload.namespace}/${workload.name}`],
    });
    expect(byKind.namespaces).toMatchObject({
      duplicates: 1,
      keys: [namespace.name],
    });
    const emf = out
      .json()
      .filter((l) => 'proxima_k8s_snapshot_duplicate_rows_total' in l);
    expect(emf.map((l) => l.kind).sort()).toEqual([
      'namespaces',
      'nodes',
      'pods',
      'workloads',
    ]);
    const pods = await query<{ name: string; labels: Record<string, string> }>(
      world.database.db,
      'select name, labels from k8s_pods where cluster_id = $1 and name = $2',
      [cluster!.id, pod.name],
    );
    expect(pods).toEqual([{ name: pod.name, labels: { copy: 'last' } }]);
  });

  it('records the size of each refused message as published on NATS, by the sync and by the bridge', {
    timeout: 180_000,
  }, async () => {
    // Prepare: a 64 KiB queue, so a gzip bomb of 80 MiB of zeros (about
    // 80 KB compressed) travels by claim check and inflates past the cap.
    world = await startWorld({ maxMessageBytes: 64 * 1024 });
    const bomb = gzipSync(Buffer.alloc(80 * 1024 * 1024, 0x20));
    const smallGzip = gzipSync(Buffer.from('this is not json at all'));
    const notJson = Buffer.from('this is not json either');
    const body = Buffer.from(
      JSON.stringify(inventoryOf(newAgentId(), minutesAgo(1))),
    );
    const agents = {
      bomb: newAgentId(),
      smallGzip: newAgentId(),
      notJson: newAgentId(),
      encoding: newAgentId(),
    };
    const gzipHeaders = () => {
      const h = headers();
      h.set('Content-Encoding', 'gzip');
      return h;
    };

    // Act
    const js = jetstream(world.publisher);
    await js.publish(world.subjectFor(agents.bomb), bomb, {
      headers: gzipHeaders(),
      timeout: 30_000,
    });
    await js.publish(world.subjectFor(agents.smallGzip), smallGzip, {
      headers: gzipHeaders(),
    });
    await world.publish(world.subjectFor(agents.notJson), notJson);
    const h = headers();
    h.set('Content-Encoding', 'br');
    await js.publish(world.subjectFor(agents.encoding), body, { headers: h });
    const rows = await eventually('four rejections', async () => {
      const r = await world!.rejections();
      return r.length >= 4 && r;
    });

    // Assess
    const byAgent = Object.fromEntries(rows.map((r) => [r.agent_id, r]));
    expect(byAgent[agents.bomb]).toMatchObject({
      stage: 'sync',
      size_bytes: bomb.byteLength,
    });
    expect(byAgent[agents.bomb]!.reason).toMatch(/inflates past/);
    expect(byAgent[agents.smallGzip]).toMatchObject({
      stage: 'sync',
      size_bytes: smallGzip.byteLength,
    });
    expect(byAgent[agents.notJson]).toMatchObject({
      stage: 'sync',
      size_bytes: notJson.byteLength,
    });
    expect(byAgent[agents.encoding]).toMatchObject({
      stage: 'bridge',
      size_bytes: body.byteLength,
    });
  });
});
