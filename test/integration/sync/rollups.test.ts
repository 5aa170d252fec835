/**
 * The figures kept beside a cluster's rows (per node, per namespace, per
 * cluster) move with each write by what it changed (migrations/0023's
 * triggers): after any sequence of syncs they must be exactly what the full
 * recompute, k8s_refresh_rollups, gives from the stored rows. Random
 * sequences of snapshots add, change (in every input of the figures),
 * move and remove pods, remove and add nodes (pods naming a node before it
 * exists), drop namespaces with or without their rows and bring them back,
 * and add and remove workloads and services; after each sync the kept
 * figures are compared with a recompute.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type Db,
  type Queryable,
  query,
  withTransaction,
} from '../../../shared/db/pool.ts';
import { refreshRollups } from '../../../shared/sync/repo.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261202);
const RUNS = Number(process.env.FUZZ_RUNS ?? 16);
const NOW = new Date('2026-06-15T12:30:00Z');

type Pod = NonNullable<Inventory['pods']>[number];
type NodeRow = NonNullable<Inventory['nodes']>[number];

const index = fc.nat({ max: 1000 });
const op = fc.oneof(
  fc.record({ t: fc.constant('restart' as const), i: index, by: fc.nat(50) }),
  fc.record({
    t: fc.constant('phase' as const),
    i: index,
    phase: fc.constantFrom(
      'Running',
      'Pending',
      'Succeeded',
      'Failed',
      'Unknown',
      'Evicted',
      null,
    ),
  }),
  fc.record({
    t: fc.constant('state' as const),
    i: index,
    container: fc.nat(3),
    state: fc.constantFrom('waiting', 'running', 'terminated', null),
    reason: fc.constantFrom(
      'CrashLoopBackOff',
      'ImagePullBackOff',
      'ErrImagePull',
      'ContainerCreating',
      null,
    ),
  }),
  fc.record({
    t: fc.constant('resources' as const),
    i: index,
    cpu: fc.option(fc.nat(4000)),
    memory: fc.option(fc.nat(1 << 30)),
  }),
  fc.record({
    t: fc.constant('move' as const),
    i: index,
    // An existing node, no node, or a node the cluster does not have yet.
    to: fc.oneof(
      index,
      fc.constant(null),
      fc.constantFrom('ghost-a', 'ghost-b'),
    ),
  }),
  fc.record({ t: fc.constant('addPod' as const), i: index, to: index }),
  fc.record({ t: fc.constant('removePod' as const), i: index }),
  fc.record({ t: fc.constant('removeNode' as const), i: index }),
  fc.record({
    t: fc.constant('addNode' as const),
    name: fc.constantFrom('ghost-a', 'ghost-b'),
  }),
  fc.record({
    t: fc.constant('node' as const),
    i: index,
    field: fc.constantFrom('usage', 'allocatable'),
    resource: fc.constantFrom('cpu_millicores', 'memory_bytes'),
    // 0 and null: a node that reports no usage.
    value: fc.option(fc.nat(1 << 30)),
  }),
  fc.record({
    t: fc.constant('dropNamespace' as const),
    i: index,
    withRows: fc.boolean(),
  }),
  fc.record({ t: fc.constant('restoreNamespaces' as const) }),
  fc.record({ t: fc.constant('removeWorkload' as const), i: index }),
  fc.record({ t: fc.constant('removeService' as const), i: index }),
  fc.record({ t: fc.constant('addService' as const), i: index }),
);
type Op = typeof op extends fc.Arbitrary<infer T> ? T : never;

function at<T>(rows: readonly T[] | undefined, i: number): T | undefined {
  return rows && rows.length > 0 ? rows[i % rows.length] : undefined;
}

/**
 * Syncs that change one input alone, which a random mix of changes rarely
 * isolates: a node's CPU usage, a container's state, a pod moved to a node
 * that arrives next, a pod that stops waiting.
 */
const EXAMPLES: Op[][][] = [
  [
    [
      {
        t: 'node',
        i: 0,
        field: 'usage',
        resource: 'cpu_millicores',
        value: 5,
      },
    ],
    [{ t: 'node', i: 0, field: 'usage', resource: 'cpu_millicores', value: 0 }],
  ],
  [
    [{ t: 'state', i: 1, container: 0, state: 'waiting', reason: null }],
    [{ t: 'state', i: 1, container: 0, state: 'running', reason: null }],
  ],
  [
    [{ t: 'move', i: 2, to: 'ghost-a' }],
    [{ t: 'addNode', name: 'ghost-a' }],
    [{ t: 'removeNode', i: 0 }],
  ],
];

let serial = 0;

/** The next snapshot: the previous one with the operation applied. */
function apply(inv: Inventory, first: Inventory, o: Op): void {
  const pods = inv.pods ?? [];
  const pod = at(pods, 'i' in o ? o.i : 0) as Pod | undefined;
  switch (o.t) {
    case 'restart':
      if (pod) pod.restart_count = (pod.restart_count ?? 0) + o.by;
      return;
    case 'phase':
      if (pod) pod.phase = o.phase;
      return;
    case 'state': {
      const c = at(pod?.containers, o.container);
      if (c) {
        c.state = o.state;
        c.waiting_reason = o.state === 'waiting' ? o.reason : null;
      }
      return;
    }
    case 'resources': {
      const c = at(pod?.containers, o.i);
      if (c) {
        c.requests = { cpu_millicores: o.cpu, memory_bytes: o.memory };
        c.limits = {
          cpu_millicores: o.cpu === null ? null : o.cpu * 2,
          memory_bytes: null,
        };
      }
      return;
    }
    case 'move':
      if (pod) {
        pod.node_name =
          typeof o.to === 'number' ? (at(inv.nodes, o.to)?.name ?? null) : o.to;
      }
      return;
    case 'addPod':
      if (pod) {
        const copy = structuredClone(pod);
        copy.name = `${pod.name}-x${serial++}`;
        copy.uid = randomUUID();
        copy.node_name = at(inv.nodes, o.to)?.name ?? null;
        pods.push(copy);
      }
      return;
    case 'removePod':
      if (pod) pods.splice(pods.indexOf(pod), 1);
      return;
    case 'removeNode': {
      const node = at(inv.nodes, o.i);
      if (node) inv.nodes?.splice(inv.nodes.indexOf(node), 1);
      return;
    }
    case 'addNode': {
      const model = first.nodes?.[0];
      if (model && !inv.nodes?.some((n) => n.name === o.name)) {
        inv.nodes?.push({
          ...structuredClone(model),
          name: o.name,
          uid: randomUUID(),
        } as NodeRow);
      }
      return;
    }
    case 'node': {
      const node = at(inv.nodes, o.i);
      if (node) {
        const figures = {
          cpu_millicores: null,
          memory_bytes: null,
          ...node[o.field],
        };
        node[o.field] = { ...figures, [o.resource]: o.value } as never;
      }
      return;
    }
    case 'dropNamespace': {
      const ns = at(inv.namespaces, o.i);
      if (!ns || !inv.namespaces) return;
      inv.namespaces.splice(inv.namespaces.indexOf(ns), 1);
      if (o.withRows) {
        inv.pods = pods.filter((p) => p.namespace !== ns.name);
        inv.workloads = inv.workloads?.filter((w) => w.namespace !== ns.name);
        inv.services = inv.services?.filter((s) => s.namespace !== ns.name);
      }
      return;
    }
    case 'restoreNamespaces':
      inv.namespaces = structuredClone(first.namespaces);
      return;
    case 'removeWorkload': {
      const w = at(inv.workloads, o.i);
      if (w) inv.workloads?.splice(inv.workloads.indexOf(w), 1);
      return;
    }
    case 'removeService': {
      const s = at(inv.services, o.i);
      if (s) inv.services?.splice(inv.services.indexOf(s), 1);
      return;
    }
    case 'addService': {
      const s = at(inv.services, o.i);
      if (s) {
        inv.services?.push({
          ...structuredClone(s),
          name: `${s.name}-x${serial++}`,
          uid: randomUUID(),
        });
      }
      return;
    }
  }
}

/** Every figure the rollups keep for the cluster, as text. */
async function figures(db: Queryable, clusterId: string): Promise<string[]> {
  const rows = await query<{ line: string }>(
    db,
    `select 'node ' || name || ' ' || row(pods_active,
              pods_cpu_requested_millicores, pods_cpu_limits_millicores,
              pods_mem_requested_bytes, pods_mem_limits_bytes)::text as line
       from k8s_nodes where cluster_id = $1
     union all
     select 'namespace ' || name || ' ' || row(workload_count, service_count,
              pod_count, pods_running, pods_restarts,
              pods_cpu_requested_millicores, pods_cpu_limits_millicores,
              pods_mem_requested_bytes, pods_mem_limits_bytes)::text
       from k8s_namespaces where cluster_id = $1
     union all
     select 'cluster ' || row(node_count, namespace_count, workload_count,
              pods_total, pods_running, pods_pending, pods_succeeded,
              pods_failed, pods_unknown, pods_not_running,
              pods_cpu_requested_millicores, pods_cpu_limits_millicores,
              pods_mem_requested_bytes, pods_mem_limits_bytes,
              pods_waiting_reasons, nodes_cpu_allocatable_millicores,
              nodes_mem_allocatable_bytes, nodes_pods_allocatable,
              nodes_cpu_used_millicores,
              nodes_cpu_allocatable_reporting_millicores, nodes_cpu_usage_nodes,
              nodes_mem_used_bytes, nodes_mem_allocatable_reporting_bytes,
              nodes_mem_usage_nodes)::text
       from clusters where id = $1
     order by 1`,
    [clusterId],
  );
  return rows.map((r) => r.line);
}

/** The figures the full recompute gives, the kept ones left as they were. */
async function recomputed(db: Db, clusterId: string): Promise<string[]> {
  let lines: string[] = [];
  await withTransaction(db, async (tx) => {
    await refreshRollups(tx, clusterId);
    lines = await figures(tx, clusterId);
    throw new Rollback();
  }).catch((error: unknown) => {
    if (!(error instanceof Rollback)) throw error;
  });
  return lines;
}

class Rollback extends Error {}

describe('the figures kept by each write', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  it('equal a full recompute after any sequence of syncs', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(op, { minLength: 1, maxLength: 6 }), {
          minLength: 1,
          maxLength: 6,
        }),
        async (steps) => {
          // Prepare: a first sync (its figures come from the recompute).
          const first = generateInventory({
            seed: 7,
            agentId: randomUUID(),
            timestamp: '2026-06-15T12:00:00Z',
          });
          const subject = {
            clientSlug: tenant.clientSlug,
            envSlug: tenant.envSlug,
            agentId: first.agent_id,
          };
          const { clusterId } = await syncInventory(
            database.db,
            subject,
            first,
            { now: () => NOW },
          );
          let inv = first;
          for (const [n, ops] of steps.entries()) {
            // Act
            inv = structuredClone(inv);
            inv.timestamp = new Date(
              Date.parse(first.timestamp) + (n + 1) * 60_000,
            ).toISOString();
            for (const o of ops) apply(inv, first, o);
            const result = await syncInventory(database.db, subject, inv, {
              now: () => NOW,
            });

            // Assess
            expect(result.outcome).toBe('applied');
            expect(await figures(database.db, clusterId)).toEqual(
              await recomputed(database.db, clusterId),
            );
          }
          // Every figure row goes with its cluster, the triggers too.
          await query(database.db, 'delete from clusters where id = $1', [
            clusterId,
          ]);
        },
      ),
      { seed: SEED, numRuns: RUNS, examples: EXAMPLES.map((e) => [e]) },
    );
  });

  it('take in the stored pods of a namespace that arrives after them', async () => {
    // Prepare: a namespace's pods stored while the snapshot lacks it.
    const first = generateInventory({
      seed: 8,
      agentId: randomUUID(),
      timestamp: '2026-06-15T12:00:00Z',
    });
    const subject = {
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      agentId: first.agent_id,
    };
    const without = structuredClone(first);
    const [dropped] = without.namespaces?.splice(0, 1) ?? [];
    without.timestamp = '2026-06-15T12:01:00Z';
    const { clusterId } = await syncInventory(database.db, subject, without, {
      now: () => NOW,
    });
    const podsOf = (inv: Inventory) =>
      inv.pods?.filter((p) => p.namespace === dropped?.name).length;
    const back = structuredClone(first);
    back.timestamp = '2026-06-15T12:02:00Z';

    // Act: the namespace comes back, its pods unchanged (not written).
    const result = await syncInventory(database.db, subject, back, {
      now: () => NOW,
    });

    // Assess
    expect(result.kinds.namespaces?.upserted).toBe(1);
    const [row] = await query<{ pod_count: number }>(
      database.db,
      'select pod_count from k8s_namespaces where cluster_id = $1 and name = $2',
      [clusterId, dropped?.name],
    );
    expect(row?.pod_count).toBe(podsOf(first));
    expect(await figures(database.db, clusterId)).toEqual(
      await recomputed(database.db, clusterId),
    );
  });
});
