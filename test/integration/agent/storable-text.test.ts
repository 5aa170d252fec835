/**
 * A cluster whose Events hold text PostgreSQL cannot store (a NUL from an
 * exec probe's /proc/<pid>/cmdline, an emoji a 32 KiB cut would split) is
 * inventoried and stored: the agent sends the text made storable (the
 * collector's storableText and cut), so the backend, which refuses such
 * text whole, never sees any. Fake apiserver, real nats-server, the sync.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from '../../../shared/agent/agent.ts';
import type { ClusterObjects } from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import { query } from '../../../shared/db/pool.ts';
import { LIMITS } from '../../../shared/wire/inventory.ts';
import {
  type FakeKube,
  serveCluster,
  startFakeKube,
} from '../../helpers/fake-kube.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';
import { eventually, startWorld, type World } from '../ingest/support.ts';

const SILENT = { info() {}, warn() {}, error() {} };

/** What a kubelet records when an exec probe prints /proc/<pid>/cmdline. */
const CMDLINE = 'Liveness probe failed: 1\u0000/usr/bin/app\u0000--serve\u0000';
const EMOJI = '\u{1F600}';
/** 32,800 characters, an emoji's two halves on either side of 32 KiB. */
const LONG = `${'x'.repeat(LIMITS.message - 1)}${EMOJI}${'y'.repeat(31)}`;

let world: World;
let kube: FakeKube;

/** A recent kubelet Event about a pod, of the core/v1 shape. */
function event(name: string, message: string): K8sObject {
  const now = new Date().toISOString();
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: {
      name,
      namespace: 'shop',
      uid: randomUUID(),
      creationTimestamp: now,
    },
    involvedObject: { kind: 'Pod', namespace: 'shop', name: 'app-0' },
    reason: 'Unhealthy',
    message,
    source: { component: 'kubelet', host: 'node-1' },
    firstTimestamp: now,
    lastTimestamp: now,
    count: 3,
    type: 'Warning',
  };
}

/** The fixtures, with the two Events and a node condition holding LONG. */
function hostileCluster(): ClusterObjects {
  const objects = allRealObjects();
  const [node, ...nodes] = (objects.nodes ?? []) as K8sObject[];
  return {
    ...objects,
    events: [
      ...(objects.events ?? []),
      event('app-0.cmdline', CMDLINE),
      event('app-0.long', LONG),
    ],
    nodes: [
      {
        ...node,
        status: {
          ...node?.status,
          conditions: [
            ...(node?.status?.conditions ?? []).filter(
              (c: K8sObject) => c?.type !== 'DiskPressure',
            ),
            {
              type: 'DiskPressure',
              status: 'False',
              reason: 'KubeletHasNoDiskPressure',
              message: LONG,
            },
          ],
        },
      },
      ...nodes,
    ],
  };
}

beforeAll(async () => {
  world = await startWorld();
  kube = await startFakeKube();
  serveCluster(kube, hostileCluster());
}, 120_000);

afterAll(async () => {
  await kube?.stop();
  await world?.stop();
});

describe('a cluster with Event text PostgreSQL cannot store', () => {
  it('is inventoried and stored, the text made storable', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const agent = new Agent({
      kubeConfig: kube.kubeConfig,
      nats: { url: world.nats.url },
      client: world.tenant.clientSlug,
      environment: world.tenant.envSlug,
      agentId,
      clusterName: 'storable',
      intervalMs: 60_000,
      excludeNamespaces: [],
      podLimit: 5000,
      pageSize: 500,
      logger: SILENT,
    });

    // Act
    const result = await agent.syncOnce().finally(() => agent.stop());
    const subject = world.subjectFor(agentId);
    const settled = await eventually('the sync to settle the message', () =>
      world.processed.find((p) => p.subject === subject),
    );

    // Assess
    expect(result.publish.published).toBe(true);
    expect(await world.rejections()).toEqual([]);
    expect(settled.outcome).toBe('applied');
    const cluster = await world.clusterOf(agentId);
    expect(cluster?.name).toBe('storable');
    const events = await query<{ name: string; message: string }>(
      world.database.db,
      `select name, message from k8s_events
       where cluster_id = $1 and name like 'app-0.%' order by name`,
      [cluster?.id],
    );
    expect(events).toEqual([
      {
        name: 'app-0.cmdline',
        message: 'Liveness probe failed: 1 /usr/bin/app --serve ',
      },
      { name: 'app-0.long', message: 'x'.repeat(LIMITS.message - 1) },
    ]);
    const [node] = await query<{
      conditions: { type: string; message: string }[];
    }>(
      world.database.db,
      `select conditions from k8s_nodes where cluster_id = $1
       and conditions @> '[{"type": "DiskPressure"}]'`,
      [cluster?.id],
    );
    expect(
      node?.conditions.find((c) => c.type === 'DiskPressure')?.message,
    ).toBe('x'.repeat(LIMITS.message - 1));
  });
});
