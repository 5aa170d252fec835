import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { armFault } from '../../../shared/faults.ts';
import { KIND_ORDER } from '../../../shared/sync/kinds.ts';
import {
  COPY_MIN_ROWS,
  syncInventory,
  UPSERT_CHUNK_ROWS,
} from '../../../shared/sync/sync.ts';
import {
  type Inventory,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { generateInventory, mutateInventory } from '../../fixtures/generate.ts';
import { realisticInventory } from '../../fixtures/realistic.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import {
  countRows,
  createTenant,
  dumpCluster,
  holdClusterLock,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const NOW = new Date('2026-06-15T12:30:00Z');
const options = { now: () => NOW };

function subjectOf(tenant: Tenant, agentId: string) {
  return { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId };
}

/**
 * What a snapshot should leave stored: every row it carries, except rows of a
 * namespace it no longer carries (they go with their namespace).
 */
function expectedCounts(inv: Inventory): Record<string, number> {
  const namespaces = new Set(inv.namespaces?.map((n) => n.name));
  return Object.fromEntries(
    KIND_ORDER.map((k) => {
      const rows = (inv[k] ?? []) as { namespace?: string }[];
      const kept = rows.filter(
        (r) => r.namespace === undefined || namespaces.has(r.namespace),
      );
      return [k, kept.length];
    }),
  );
}

describe('syncInventory', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  function small(
    seed: number,
    overrides: Partial<Parameters<typeof generateInventory>[0]> = {},
  ) {
    return generateInventory({
      seed,
      agentId: randomUUID(),
      timestamp: '2026-06-15T12:00:00Z',
      ...overrides,
    });
  }

  it('creates every row on a first sync, with counts on the cluster and namespaces', async () => {
    // Prepare
    const inv = small(1);

    // Act
    const result = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    );

    // Assess
    expect(result.outcome).toBe('applied');
    expect(await countRows(database.db, result.clusterId)).toEqual(
      expectedCounts(inv),
    );
    const cluster = await queryOne(
      database.db,
      `select node_count, namespace_count, workload_count, agent_status, last_seen_at
       from clusters where id = $1`,
      [result.clusterId],
    );
    expect(cluster).toEqual({
      node_count: inv.nodes?.length,
      namespace_count: inv.namespaces?.length,
      workload_count: inv.workloads?.length,
      agent_status: 'connected',
      last_seen_at: new Date(inv.timestamp),
    });
    const [ns] = inv.namespaces ?? [];
    const stored = await queryOne(
      database.db,
      `select workload_count, pod_count, service_count from k8s_namespaces
       where cluster_id = $1 and name = $2`,
      [result.clusterId, ns?.name],
    );
    expect(stored).toEqual({
      workload_count: inv.workloads?.filter((w) => w.namespace === ns?.name)
        .length,
      pod_count: inv.pods?.filter((p) => p.namespace === ns?.name).length,
      service_count: inv.services?.filter((s) => s.namespace === ns?.name)
        .length,
    });
  });

  it('links every pod to its node, workload and namespace rows', async () => {
    // Prepare
    const inv = small(2);

    // Act
    const { clusterId } = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    );

    // Assess
    const unlinked = await queryOne<{
      node: number;
      workload: number;
      ns: number;
    }>(
      database.db,
      `select count(*) filter (where node_name is not null and node_id is null)::int as node,
              count(*) filter (where workload_name is not null and workload_id is null)::int as workload,
              count(*) filter (where namespace_id is null)::int as ns
       from k8s_pods where cluster_id = $1`,
      [clusterId],
    );
    expect(unlinked).toEqual({ node: 0, workload: 0, ns: 0 });
  });

  it('links unchanged rows to a namespace and a node that arrive in a later snapshot', async () => {
    // Prepare: pods first arrive without their namespaces and nodes.
    const inv = small(17);
    const subject = subjectOf(tenant, inv.agent_id);
    const bare: Inventory = structuredClone(inv);
    delete bare.namespaces;
    delete bare.nodes;
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      bare,
      options,
    );
    const before = await queryOne<{ ns: number; node: number }>(
      database.db,
      `select count(*) filter (where namespace_id is null)::int as ns,
              count(*) filter (where node_name is not null and node_id is null)::int as node
       from k8s_pods where cluster_id = $1`,
      [clusterId],
    );
    const later = {
      ...structuredClone(inv),
      timestamp: '2026-06-15T12:05:00Z',
    };

    // Act
    const result = await syncInventory(database.db, subject, later, options);

    // Assess
    expect(before).toEqual({
      ns: inv.pods?.length,
      node: inv.pods?.filter((p) => p.node_name !== null).length,
    });
    expect(result.kinds.pods?.upserted).toBe(0);
    const after = await queryOne(
      database.db,
      `select count(*) filter (where namespace_id is null)::int as ns,
              count(*) filter (where node_name is not null and node_id is null)::int as node
       from k8s_pods where cluster_id = $1`,
      [clusterId],
    );
    expect(after).toEqual({ ns: 0, node: 0 });
  });

  it('stores the DNS domain the agent reports, else cluster.local', async () => {
    // Prepare
    const reported = small(31);
    reported.cluster.dns_domain = 'corp.internal';
    const unreported = small(32);
    unreported.cluster.dns_domain = null;

    // Act
    const ids = [];
    for (const inv of [reported, unreported]) {
      const { clusterId } = await syncInventory(
        database.db,
        subjectOf(tenant, inv.agent_id),
        inv,
        options,
      );
      ids.push(clusterId);
    }

    // Assess
    const stored = await query<{ id: string; dns_domain: string }>(
      database.db,
      'select id, dns_domain from clusters where id = any($1::uuid[])',
      [ids],
    );
    expect(Object.fromEntries(stored.map((r) => [r.id, r.dns_domain]))).toEqual(
      {
        [ids[0] as string]: 'corp.internal',
        [ids[1] as string]: 'cluster.local',
      },
    );
  });

  it('refuses a snapshot holding a value its column cannot, naming the field and never the value', async () => {
    // Prepare: a snapshot the wire schema accepts (the sync validates every
    // new row) and a column refuses: two nodes with one uid.
    const inv = small(33);
    const [first, second] = inv.nodes ?? [];
    if (!first || !second) throw new Error('the generated inventory has nodes');
    second.uid = first.uid;

    // Act
    const result = syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    );

    // Assess
    await expect(result).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(result).rejects.toMatchObject({
      reason: expect.stringMatching(
        /^nodes: the database refused two rows with the same key/,
      ),
    });
    const stored = await query(
      database.db,
      'select id from clusters where agent_id = $1',
      [inv.agent_id],
    );
    expect(stored).toEqual([]);
  });

  it('drops NUL characters PostgreSQL cannot store instead of refusing the cluster', async () => {
    // Prepare
    const inv = small(18);
    const event = inv.events?.[0];
    if (!event) throw new Error('the generated inventory has events');
    event.message = 'probe failed:\u0000 exit 1';

    // Act
    const { clusterId } = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    );

    // Assess
    const stored = await queryOne(
      database.db,
      'select message from k8s_events where cluster_id = $1 and name = $2',
      [clusterId, event.name],
    );
    expect(stored.message).toBe('probe failed: exit 1');
  });

  it('writes nothing when the same snapshot is replayed', async () => {
    // Prepare
    const inv = small(3);
    const subject = subjectOf(tenant, inv.agent_id);
    const first = await syncInventory(database.db, subject, inv, options);
    const before = await dumpCluster(database.db, first.clusterId);

    // Act
    const replay = await syncInventory(database.db, subject, inv, options);

    // Assess: a replay (an equal snapshot time) is a no-op, the cluster
    // row included; its workloads count as not newer.
    const after = await dumpCluster(database.db, first.clusterId);
    expect(replay.outcome).toBe('skipped_not_newer');
    expect(after).toEqual(before);
    expect(replay.facts.notNewer).toBe(inv.workloads?.length);
    expect(replay.facts.notNewer).toBeGreaterThan(0);
  });

  it('applies a later snapshot with the same content, writing only the cluster row', async () => {
    // Prepare
    const inv = small(3);
    const subject = subjectOf(tenant, inv.agent_id);
    const first = await syncInventory(database.db, subject, inv, options);
    const before = await dumpCluster(database.db, first.clusterId);
    const later = {
      ...inv,
      timestamp: new Date(Date.parse(inv.timestamp) + 60_000).toISOString(),
    };

    // Act
    const next = await syncInventory(database.db, subject, later, options);

    // Assess
    const after = await dumpCluster(database.db, first.clusterId);
    expect(next.outcome).toBe('applied');
    // Only the cluster row itself moves; no child row version changes.
    expect(after.filter((l) => !l.startsWith('cluster '))).toEqual(
      before.filter((l) => !l.startsWith('cluster ')),
    );
    expect(Object.keys(next.kinds).length).toBeGreaterThan(0);
    for (const counts of Object.values(next.kinds)) {
      expect(counts.upserted).toBe(0);
      expect(counts.pruned).toBe(0);
      expect(counts.unchanged).toBe(counts.received);
    }
  });

  it('commits a resync that changed no row without waiting for the disk, and any other durably', async () => {
    // Prepare: the transaction's setting as it is about to commit.
    const inv = small(3);
    const subject = subjectOf(tenant, inv.agent_id);
    const commits: unknown[] = [];
    const disarm = armFault('sync.before-commit', async ({ tx }) => {
      const { rows } = await tx.query('show synchronous_commit');
      commits.push(rows[0]);
    });
    const at = (minutes: number) =>
      new Date(Date.parse(inv.timestamp) + minutes * 60_000).toISOString();
    const changed = mutateInventory(inv, {
      seed: 9,
      removeFraction: 0,
      changeFraction: 0.1,
    });

    // Act: a first sync, a resync with the same content, one changing pods.
    try {
      await syncInventory(database.db, subject, inv, options);
      await syncInventory(
        database.db,
        subject,
        { ...inv, timestamp: at(1) },
        options,
      );
      await syncInventory(
        database.db,
        subject,
        { ...changed, timestamp: at(2) },
        options,
      );
    } finally {
      disarm();
    }

    // Assess: only the unchanged resync's commit skips the flush, and the
    // setting does not outlive its transaction.
    expect(commits).toEqual([
      { synchronous_commit: 'on' },
      { synchronous_commit: 'off' },
      { synchronous_commit: 'on' },
    ]);
    const [session] = await query(database.db, 'show synchronous_commit');
    expect(session).toEqual({ synchronous_commit: 'on' });
  });

  it('prunes exactly the rows a later snapshot no longer carries', async () => {
    // Prepare
    const inv = small(4);
    const subject = subjectOf(tenant, inv.agent_id);
    await syncInventory(database.db, subject, inv, options);
    const next = mutateInventory(inv, {
      changeFraction: 0.1,
      removeFraction: 0.1,
    });
    // Keep every namespace, so that exactly the removed rows go.
    next.namespaces = inv.namespaces;

    // Act
    const result = await syncInventory(database.db, subject, next, options);

    // Assess
    expect(await countRows(database.db, result.clusterId)).toEqual(
      expectedCounts(next),
    );
    const storedPods = await query<{ name: string }>(
      database.db,
      "select namespace || '/' || name as name from k8s_pods where cluster_id = $1",
      [result.clusterId],
    );
    expect(storedPods.map((r) => r.name).sort()).toEqual(
      (next.pods ?? []).map((p) => `${p.namespace}/${p.name}`).sort(),
    );
    const removedPods = (inv.pods?.length ?? 0) - (next.pods?.length ?? 0);
    expect(result.kinds.pods?.pruned).toBe(removedPods);
    expect(result.kinds.pods?.upserted).toBeGreaterThan(0);
  });

  it('keeps the cluster row’s pod figures equal to its stored pods', async () => {
    // Prepare
    const inv = small(16);
    const subject = subjectOf(tenant, inv.agent_id);
    await syncInventory(database.db, subject, inv, options);
    const next = mutateInventory(inv, {
      changeFraction: 0.3,
      removeFraction: 0.2,
    });
    next.namespaces = inv.namespaces;

    // Act
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      next,
      options,
    );

    // Assess
    const stored = await queryOne(
      database.db,
      `select pods_total, pods_running, pods_not_running,
              pods_cpu_requested_millicores, pods_mem_limits_bytes
       from clusters where id = $1`,
      [clusterId],
    );
    const [{ cpu, mem }] = (await query<{ cpu: number; mem: number }>(
      database.db,
      `select coalesce(sum(cpu_requests_millicores), 0) as cpu,
              coalesce(sum(memory_limits_bytes), 0) as mem
       from k8s_pods where cluster_id = $1
         and coalesce(phase not in ('Succeeded', 'Failed'), true)`,
      [clusterId],
    )) as [{ cpu: number; mem: number }];
    expect(stored).toEqual({
      pods_total: next.pods?.length,
      pods_running: next.pods?.filter((p) => p.phase === 'Running').length,
      pods_not_running: next.pods?.filter(
        (p) => p.phase !== 'Running' && p.phase !== 'Succeeded',
      ).length,
      pods_cpu_requested_millicores: cpu,
      pods_mem_limits_bytes: mem,
    });
  });

  it('moves the figures by what the written rows changed, without reading every pod again', async () => {
    // Prepare: a figure no sync would write, to see whether a resync
    // recomputes it from every pod (it must not: only the difference the
    // written rows made is added).
    const inv = small(43);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const [pod] = inv.pods ?? [];
    const figures = async () =>
      queryOne<{ pods_total: number; restarts: number }>(
        database.db,
        `select c.pods_total, ns.pods_restarts::int as restarts
         from clusters c join k8s_namespaces ns on ns.cluster_id = c.id
         where c.id = $1 and ns.name = $2`,
        [clusterId, pod?.namespace],
      );
    const before = await figures();
    await query(
      database.db,
      'update clusters set pods_total = -1 where id = $1',
      [clusterId],
    );
    const podChanged = {
      ...inv,
      timestamp: '2026-06-15T12:10:00Z',
      pods: inv.pods?.map((p, i) =>
        i === 0 ? { ...p, restart_count: (p.restart_count ?? 0) + 3 } : p,
      ),
    };

    // Act
    const result = await syncInventory(
      database.db,
      subject,
      podChanged,
      options,
    );

    // Assess: the pod's namespace moved by its 3 restarts; the spoiled
    // total was left as it was (the pod count did not change).
    expect(result.kinds.pods?.upserted).toBe(1);
    expect(await figures()).toEqual({
      pods_total: -1,
      restarts: before.restarts + 3,
    });
  });

  it('keeps each node’s and namespace’s figures equal to its stored rows', async () => {
    // Prepare
    const inv = small(17);
    const subject = subjectOf(tenant, inv.agent_id);
    await syncInventory(database.db, subject, inv, options);
    const next = mutateInventory(inv, {
      changeFraction: 0.3,
      removeFraction: 0.2,
    });
    next.namespaces = inv.namespaces;
    next.nodes = inv.nodes?.slice(1);

    // Act
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      next,
      options,
    );

    // Assess: the kept figures, then the same figures from the rows.
    const kept = await query(
      database.db,
      `select n.name, n.pods_active, n.pods_cpu_requested_millicores,
              n.pods_cpu_limits_millicores, n.pods_mem_requested_bytes,
              n.pods_mem_limits_bytes
       from k8s_nodes n where n.cluster_id = $1 order by n.name`,
      [clusterId],
    );
    const live = await query(
      database.db,
      `select n.name,
              count(p.id) filter (where p.active) as pods_active,
              coalesce(sum(p.cpu_requests_millicores) filter (where p.active), 0)
                as pods_cpu_requested_millicores,
              coalesce(sum(p.cpu_limits_millicores) filter (where p.active), 0)
                as pods_cpu_limits_millicores,
              coalesce(sum(p.memory_requests_bytes) filter (where p.active), 0)
                as pods_mem_requested_bytes,
              coalesce(sum(p.memory_limits_bytes) filter (where p.active), 0)
                as pods_mem_limits_bytes
       from k8s_nodes n
       left join (select *, coalesce(phase not in ('Succeeded', 'Failed'), true)
                            as active from k8s_pods) p on p.node_id = n.id
       where n.cluster_id = $1 group by n.name order by n.name`,
      [clusterId],
    );
    expect(kept.length).toBe(next.nodes?.length);
    expect(kept.some((n) => Number(n.pods_active) > 0)).toBe(true);
    expect(kept).toEqual(live);

    const keptNs = await query(
      database.db,
      `select name, workload_count, pod_count, service_count, pods_running,
              pods_restarts, pods_cpu_requested_millicores
       from k8s_namespaces where cluster_id = $1 order by name`,
      [clusterId],
    );
    const liveNs = await query(
      database.db,
      `select ns.name,
              (select count(*) from k8s_workloads w
                where w.cluster_id = $1 and w.namespace = ns.name) as workload_count,
              (select count(*) from k8s_pods p
                where p.cluster_id = $1 and p.namespace = ns.name) as pod_count,
              (select count(*) from k8s_services s
                where s.cluster_id = $1 and s.namespace = ns.name) as service_count,
              (select count(*) from k8s_pods p
                where p.cluster_id = $1 and p.namespace = ns.name
                  and p.phase = 'Running') as pods_running,
              (select coalesce(sum(restart_count), 0) from k8s_pods p
                where p.cluster_id = $1 and p.namespace = ns.name) as pods_restarts,
              (select coalesce(sum(cpu_requests_millicores), 0) from k8s_pods p
                where p.cluster_id = $1 and p.namespace = ns.name
                  and coalesce(p.phase not in ('Succeeded', 'Failed'), true))
                as pods_cpu_requested_millicores
       from k8s_namespaces ns where ns.cluster_id = $1 order by ns.name`,
      [clusterId],
    );
    expect(keptNs.some((n) => Number(n.pod_count) > 0)).toBe(true);
    expect(keptNs).toEqual(liveNs);

    const cluster = await queryOne(
      database.db,
      `select node_count, namespace_count, workload_count, pods_pending,
              pods_waiting_reasons
       from clusters where id = $1`,
      [clusterId],
    );
    const waiting = new Map<string, number>();
    for (const pod of next.pods ?? []) {
      for (const c of pod.containers ?? []) {
        if (c.state !== 'waiting') continue;
        const reason = c.waiting_reason ?? 'Unknown';
        waiting.set(reason, (waiting.get(reason) ?? 0) + 1);
      }
    }
    expect(cluster).toEqual({
      node_count: next.nodes?.length,
      namespace_count: next.namespaces?.length,
      workload_count: next.workloads?.length,
      pods_pending: next.pods?.filter((p) => p.phase === 'Pending').length,
      pods_waiting_reasons: [...waiting]
        .map(([reason, count]) => ({ reason, count }))
        .sort((a, b) => b.count - a.count || (a.reason < b.reason ? -1 : 1)),
    });
  });

  it('removes every row of a namespace dropped from a later snapshot', async () => {
    // Prepare
    const inv = small(5);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const dropped = inv.namespaces?.[0]?.name;
    const next: Inventory = structuredClone(inv);
    next.timestamp = '2026-06-15T12:05:00Z';
    for (const kind of KIND_ORDER) {
      const rows = next[kind] as
        | { namespace?: string; name: string }[]
        | undefined;
      if (!rows) continue;
      (next as Record<string, unknown>)[kind] = rows.filter((r) =>
        kind === 'namespaces' ? r.name !== dropped : r.namespace !== dropped,
      );
    }

    // Act
    await syncInventory(database.db, subject, next, options);

    // Assess
    const left = await query(
      database.db,
      `select 'pods' from k8s_pods where cluster_id = $1 and namespace = $2
       union all select 'workloads' from k8s_workloads where cluster_id = $1 and namespace = $2
       union all select 'services' from k8s_services where cluster_id = $1 and namespace = $2
       union all select 'events' from k8s_events where cluster_id = $1 and namespace = $2
       union all select 'namespace' from k8s_namespaces where cluster_id = $1 and name = $2`,
      [clusterId, dropped],
    );
    expect(left).toEqual([]);
    expect(await countRows(database.db, clusterId)).toEqual(
      expectedCounts(next),
    );
  });

  it('prunes nothing of a kind whose array is missing', async () => {
    // Prepare
    const inv = small(6);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const next: Inventory = {
      ...structuredClone(inv),
      timestamp: '2026-06-15T12:05:00Z',
    };
    delete next.pods;
    delete next.events;

    // Act
    const result = await syncInventory(database.db, subject, next, options);

    // Assess
    expect(result.kinds.pods).toBeUndefined();
    const counts = await countRows(database.db, clusterId);
    expect(counts.pods).toBe(inv.pods?.length);
    expect(counts.events).toBe(inv.events?.length);
  });

  it('skips a snapshot older than the one applied, changing nothing', async () => {
    // Prepare
    const inv = small(7, { timestamp: '2026-06-15T12:10:00Z' });
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const before = await dumpCluster(database.db, clusterId);
    const older = mutateInventory(inv, {
      changeFraction: 0.5,
      removeFraction: 0.2,
      timestamp: '2026-06-15T12:05:00Z',
    });

    // Act
    const result = await syncInventory(database.db, subject, older, options);

    // Assess
    expect(result.outcome).toBe('skipped_not_newer');
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('leaves the previous state exactly as it was when a sync fails midway', async () => {
    // Prepare
    const inv = small(8);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const before = await dumpCluster(database.db, clusterId);
    const next = mutateInventory(inv, {
      changeFraction: 0.3,
      removeFraction: 0.1,
    });

    // Act
    const attempt = syncInventory(database.db, subject, next, {
      ...options,
      beforePrune: async () => {
        throw new Error('injected failure');
      },
    });

    // Assess
    await expect(attempt).rejects.toThrow('injected failure');
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('writes a kind of more rows than one statement carries in several, ending as one write would', async () => {
    // Prepare: 2,000 pods, then 60% of them changed: two chunks each time.
    const inv = small(41, { size: 'medium' });
    expect(inv.pods?.length).toBeGreaterThan(UPSERT_CHUNK_ROWS);
    const subject = subjectOf(tenant, inv.agent_id);
    const first = await syncInventory(database.db, subject, inv, options);
    const next = mutateInventory(inv, {
      changeFraction: 0.6,
      removeFraction: 0.05,
      timestamp: '2026-06-15T12:05:00Z',
    });
    // Pods of a dropped namespace go with it on a resync only.
    next.namespaces = inv.namespaces;
    const direct = { ...next, agent_id: randomUUID() };

    // Act
    const resync = await syncInventory(database.db, subject, next, options);
    const fresh = await syncInventory(
      database.db,
      subjectOf(tenant, direct.agent_id),
      direct,
      options,
    );

    // Assess
    expect(first.kinds.pods?.upserted).toBe(inv.pods?.length);
    expect(resync.kinds.pods?.upserted).toBeGreaterThan(UPSERT_CHUNK_ROWS);
    const pods = (clusterId: string) =>
      query(
        database.db,
        `select p.namespace, p.name, p.phase, p.restart_count, p.ready_containers,
                p.containers, p.content_hash, ns.name as ns, nd.name as node,
                wl.name as workload
         from k8s_pods p
         left join k8s_namespaces ns on ns.id = p.namespace_id
         left join k8s_nodes nd on nd.id = p.node_id
         left join k8s_workloads wl on wl.id = p.workload_id
         where p.cluster_id = $1 order by p.namespace, p.name`,
        [clusterId],
      );
    const stored = await pods(resync.clusterId);
    expect(stored).toHaveLength(expectedCounts(next).pods ?? -1);
    expect(stored).toEqual(await pods(fresh.clusterId));
    expect(stored.filter((p) => p.ns === null)).toEqual([]);
  });

  it('copies a first sync’s rows exactly as the upsert writes them, special characters included', async () => {
    // Prepare: one snapshot synced twice, by COPY into a new cluster and by
    // the upsert into one that holds a row of each kind already.
    const inv = small(44, { size: 'medium' });
    const tricky =
      'tab\there\nnew line \\ back\\slash "quoted" \u0000nul {brace} \\N é ✓';
    const [pod, event] = [inv.pods?.[7], inv.events?.[3]];
    if (!pod || !event) throw new Error('the generated inventory has rows');
    pod.labels = { ...pod.labels, tricky };
    pod.node_name = `${pod.node_name}\\tx`;
    event.message = tricky;
    const seed = {
      ...inv,
      agent_id: randomUUID(),
      timestamp: '2026-06-15T11:55:00Z',
      workloads: inv.workloads?.slice(0, 1),
      pods: inv.pods?.slice(0, 1),
      events: inv.events?.slice(0, 1),
      endpoint_slices: inv.endpoint_slices?.slice(0, 1),
    };
    const upserted = { ...inv, agent_id: seed.agent_id };
    await syncInventory(
      database.db,
      subjectOf(tenant, seed.agent_id),
      seed,
      options,
    );

    // Act
    const copied = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    );
    const viaUpsert = await syncInventory(
      database.db,
      subjectOf(tenant, upserted.agent_id),
      upserted,
      options,
    );

    // Assess
    const copiedKinds = ['workloads', 'pods', 'events', 'endpoint_slices'];
    for (const kind of copiedKinds) {
      expect(copied.kinds[kind as 'pods']?.copied).toBe(true);
      expect(viaUpsert.kinds[kind as 'pods']?.copied).toBe(false);
    }
    const rows = (table: string, clusterId: string) =>
      query(
        database.db,
        `select (to_jsonb(t) - array['id', 'cluster_id', 'namespace_id',
                   'node_id', 'workload_id', 'updated_at',
                   -- the seed's one workload saw its facts first at 11:55
                   'spec_facts_at'])
                || jsonb_build_object(
                   'ns', (select name from k8s_namespaces where id = t.namespace_id),
                   'node', (select name from k8s_nodes
                            where id = (to_jsonb(t) ->> 'node_id')::uuid),
                   'workload', (select concat_ws('/', kind, namespace, name)
                                from k8s_workloads
                                where id = (to_jsonb(t) ->> 'workload_id')::uuid)) as row
         from ${table} t where cluster_id = $1 order by namespace, name`,
        [clusterId],
      );
    for (const table of [
      'k8s_workloads',
      'k8s_pods',
      'k8s_events',
      'k8s_endpoint_slices',
    ]) {
      const stored = await rows(table, copied.clusterId);
      expect(stored.length).toBeGreaterThanOrEqual(COPY_MIN_ROWS);
      expect(stored).toEqual(await rows(table, viaUpsert.clusterId));
    }
    const trickyPod = await queryOne<{ labels: Record<string, string> }>(
      database.db,
      'select labels from k8s_pods where cluster_id = $1 and name = $2',
      [copied.clusterId, pod.name],
    );
    expect(trickyPod.labels.tricky).toBe(tricky.replace('\u0000', ''));
    const factsAt = await query(
      database.db,
      `select distinct spec_facts_at from k8s_workloads
       where cluster_id = $1 and spec_facts is not null`,
      [copied.clusterId],
    );
    expect(factsAt).toEqual([{ spec_facts_at: new Date(inv.timestamp) }]);
  });

  it('refuses a first sync whose copied rows a column rule refuses, storing nothing', async () => {
    // Prepare
    const inv = small(45, { size: 'medium' });
    const last = inv.pods?.at(-1);
    if (!last) throw new Error('the generated inventory has pods');
    last.restart_count = 2_147_483_001;
    await query(
      database.db,
      `alter table k8s_pods add constraint test_refused_copy
         check (restart_count is distinct from 2147483001) not valid`,
    );

    // Act
    const attempt = syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      options,
    ).finally(() =>
      query(
        database.db,
        'alter table k8s_pods drop constraint test_refused_copy',
      ),
    );

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(attempt).rejects.toMatchObject({
      reason: expect.stringMatching(/^pods: the database refused/),
    });
    const stored = await query(
      database.db,
      'select id from clusters where agent_id = $1',
      [inv.agent_id],
    );
    expect(stored).toEqual([]);
  });

  it('refuses the whole snapshot when a later chunk of a kind is refused, leaving every row as it was', async () => {
    // Prepare: a resync whose last changed pod a column rule refuses, after
    // more than one statement's worth of changed pods.
    const inv = small(42, { size: 'medium' });
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const before = await dumpCluster(database.db, clusterId);
    const next = mutateInventory(inv, {
      changeFraction: 0.7,
      removeFraction: 0,
      timestamp: '2026-06-15T12:05:00Z',
    });
    const last = next.pods?.at(-1);
    if (!last) throw new Error('the generated inventory has pods');
    last.restart_count = 2_147_483_000;
    await query(
      database.db,
      `alter table k8s_pods add constraint test_refused_restarts
         check (restart_count is distinct from 2147483000) not valid`,
    );

    // Act
    const attempt = syncInventory(database.db, subject, next, options).finally(
      () =>
        query(
          database.db,
          'alter table k8s_pods drop constraint test_refused_restarts',
        ),
    );

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(attempt).rejects.toMatchObject({
      reason: expect.stringMatching(/^pods: the database refused/),
    });
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('runs two syncs of one cluster one after the other, ending in the later state', async () => {
    // Prepare
    const inv = small(9);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const later = mutateInventory(inv, {
      changeFraction: 0.2,
      removeFraction: 0.1,
      timestamp: '2026-06-15T12:10:00Z',
    });
    const earlier = mutateInventory(inv, {
      seed: 5,
      changeFraction: 0.2,
      removeFraction: 0.05,
      timestamp: '2026-06-15T12:05:00Z',
    });

    // Act: both start at once; whichever takes the lock first, the later wins.
    const results = await Promise.all([
      syncInventory(database.db, subject, later, options),
      syncInventory(database.db, subject, earlier, options),
    ]);

    // Assess
    expect(results.map((r) => r.outcome).sort()).toContain('applied');
    expect(await countRows(database.db, clusterId)).toEqual(
      expectedCounts(later),
    );
    const cluster = await queryOne(
      database.db,
      'select last_snapshot_at from clusters where id = $1',
      [clusterId],
    );
    expect(cluster.last_snapshot_at).toEqual(new Date(later.timestamp));
  });

  it('waits for the cluster lock held by another transaction', async () => {
    // Prepare
    const inv = small(10);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const next = mutateInventory(inv, {
      changeFraction: 0.1,
      removeFraction: 0.1,
    });
    const lock = await holdClusterLock(database.db, clusterId);

    // Act
    let finished = false;
    const sync = syncInventory(database.db, subject, next, options).then(
      (r) => {
        finished = true;
        return r;
      },
    );
    // The sync's session shows up waiting on a row lock.
    await eventually('the sync to wait on the cluster lock', async () => {
      const [row] = await query<{ n: number }>(
        database.db,
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return (row?.n ?? 0) > 0;
    });
    const finishedWhileLocked = finished;
    await lock.release();
    const result = await sync;

    // Assess
    expect(finishedWhileLocked).toBe(false);
    expect(result.outcome).toBe('applied');
  });

  it('syncs a different cluster while another cluster is locked', async () => {
    // Prepare
    const a = small(11);
    const b = small(12);
    const { clusterId: idA } = await syncInventory(
      database.db,
      subjectOf(tenant, a.agent_id),
      a,
      options,
    );
    const lock = await holdClusterLock(database.db, idA);

    // Act
    const result = await syncInventory(
      database.db,
      subjectOf(tenant, b.agent_id),
      b,
      options,
    );
    await lock.release();

    // Assess
    expect(result.outcome).toBe('applied');
    expect(await countRows(database.db, result.clusterId)).toEqual(
      expectedCounts(b),
    );
  });

  it('rolls back and changes nothing when the lock wait outlasts its bound', async () => {
    // Prepare
    const inv = small(13);
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(
      database.db,
      subject,
      inv,
      options,
    );
    const before = await dumpCluster(database.db, clusterId);
    const next = mutateInventory(inv, {
      changeFraction: 0.1,
      removeFraction: 0.1,
    });
    const lock = await holdClusterLock(database.db, clusterId);

    // Act
    const attempt = syncInventory(database.db, subject, next, {
      ...options,
      timeoutMs: 500,
    });

    // Assess
    await expect(attempt).rejects.toThrow();
    await lock.release();
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('refuses an unknown tenant and an agent id that does not match the subject', async () => {
    // Prepare
    const inv = small(14);

    // Act
    const unknownTenant = await syncInventory(
      database.db,
      { clientSlug: 'nobody', envSlug: 'production', agentId: inv.agent_id },
      inv,
      options,
    ).catch((error: unknown) => error);
    const unknownEnvironment = await syncInventory(
      database.db,
      {
        clientSlug: tenant.clientSlug,
        envSlug: 'nowhere',
        agentId: inv.agent_id,
      },
      inv,
      options,
    ).catch((error: unknown) => error);
    const mismatch = await syncInventory(
      database.db,
      subjectOf(tenant, randomUUID()),
      inv,
      options,
    ).catch((error: unknown) => error);

    // Assess
    for (const unknown of [unknownTenant, unknownEnvironment]) {
      expect(unknown).toMatchObject({
        name: 'RejectedInventoryError',
        reason: expect.stringContaining('unknown client or environment'),
      });
    }
    expect(mismatch).toMatchObject({
      name: 'RejectedInventoryError',
      reason: expect.stringContaining('agent_id'),
    });
    const clusters = await query(
      database.db,
      'select 1 from clusters where agent_id = $1',
      [inv.agent_id],
    );
    expect(clusters).toEqual([]);
  });

  // The spec's table (Cluster Status and Asset Status Mapping), written out
  // rather than read from the code's; an agent that reports no status (the
  // field left out or null) is a cluster of unknown health.
  it.each([
    ['healthy', 'healthy', 'active', 'healthy'],
    ['degraded', 'degraded', 'degraded', 'degraded'],
    ['unreachable', 'unreachable', 'unreachable', 'unreachable'],
    ['unknown', 'unknown', 'active', 'unknown'],
    ['no status (left out)', 'unknown', 'active', undefined],
    ['no status (null)', 'unknown', 'active', null],
  ] as const)(
    'an agent reporting %s gives cluster status %s and asset status %s',
    async (_case, clusterStatus, assetStatus, reported) => {
      // Prepare: the snapshot as sent, then read as the wire reads it.
      const generated = small(15);
      const { status: _status, ...cluster } = generated.cluster;
      const inv = parseInventory({
        ...generated,
        cluster:
          reported === undefined ? cluster : { ...cluster, status: reported },
      });

      // Act
      const { clusterId } = await syncInventory(
        database.db,
        subjectOf(tenant, inv.agent_id),
        inv,
        options,
      );

      // Assess
      const row = await queryOne(
        database.db,
        `select c.status as cluster_status, a.status as asset_status, a.asset_type
         from clusters c join assets a on a.id = c.asset_id where c.id = $1`,
        [clusterId],
      );
      expect(row).toEqual({
        cluster_status: clusterStatus,
        asset_status: assetStatus,
        asset_type: 'cluster',
      });
    },
  );

  it("updates the asset's name and status with the cluster's on a resync, and leaves an unchanged asset unwritten", async () => {
    // Prepare
    const inv = small(16);
    inv.cluster.status = 'healthy';
    const subject = subjectOf(tenant, inv.agent_id);
    const { clusterId } = await syncInventory(database.db, subject, inv, {
      now: () => new Date(inv.timestamp),
    });
    const assetOf = () =>
      queryOne<{ name: string; status: string; updated_at: Date }>(
        database.db,
        `select a.name, a.status, a.updated_at
         from clusters c join assets a on a.id = c.asset_id where c.id = $1`,
        [clusterId],
      );
    const at = (minutes: number) =>
      new Date(Date.parse(inv.timestamp) + minutes * 60_000);
    const resync = (minutes: number, cluster: Inventory['cluster']) =>
      syncInventory(
        database.db,
        subject,
        { ...inv, cluster, timestamp: at(minutes).toISOString() },
        { now: () => at(minutes) },
      );

    // Act
    await resync(1, inv.cluster);
    const unchanged = await assetOf();
    await resync(2, inv.cluster);
    const still = await assetOf();
    await resync(3, { ...inv.cluster, name: 'renamed', status: 'degraded' });
    const changed = await assetOf();

    // Assess
    expect(unchanged.status).toBe('active');
    expect(still.updated_at).toEqual(unchanged.updated_at);
    expect(changed).toMatchObject({ name: 'renamed', status: 'degraded' });
    expect(changed.updated_at.getTime()).toBeGreaterThan(
      still.updated_at.getTime(),
    );
  });
});

describe('syncInventory with the realistic fixture', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('stores every object of the realistic inventory', async () => {
    // Prepare
    const inv = realisticInventory();
    const tenant = await createTenant(database.db);

    // Act
    const result = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      // The captured events are older than a day: keep them all here.
      { now: () => new Date(inv.timestamp), eventRetentionHours: 24 * 3650 },
    );

    // Assess
    expect(await countRows(database.db, result.clusterId)).toEqual(
      expectedCounts(inv),
    );
  });

  it('keeps only events seen within the retention period', async () => {
    // Prepare
    const inv = realisticInventory();
    const tenant = await createTenant(database.db);
    const cutoff = Date.parse(inv.timestamp) - 24 * 3_600_000;
    const recent = (inv.events ?? []).filter((e) => {
      const seen = e.last_seen ?? e.first_seen ?? e.created_at;
      return seen === null || Date.parse(seen) >= cutoff;
    });

    // Act
    const result = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      { now: () => new Date(inv.timestamp), eventRetentionHours: 24 },
    );

    // Assess
    const counts = await countRows(database.db, result.clusterId);
    expect(counts.events).toBe(recent.length);
    expect(recent.length).toBeLessThan(inv.events?.length ?? 0);
  });

  it('drops, on a resync, an unchanged event that aged out of retention since', async () => {
    // Prepare: every event kept by a first sync with a long retention.
    const inv = realisticInventory();
    const tenant = await createTenant(database.db);
    const subject = subjectOf(tenant, inv.agent_id);
    await syncInventory(database.db, subject, inv, {
      now: () => new Date(inv.timestamp),
      eventRetentionHours: 24 * 3650,
    });
    const later = new Date(Date.parse(inv.timestamp) + 60_000);
    const cutoff = later.getTime() - 24 * 3_600_000;
    const recent = (inv.events ?? []).filter((e) => {
      const seen = e.last_seen ?? e.first_seen ?? e.created_at;
      return seen === null || Date.parse(seen) >= cutoff;
    });

    // Act: the same events a minute later, under the 24 h retention.
    const result = await syncInventory(
      database.db,
      subject,
      { ...inv, timestamp: later.toISOString() },
      { now: () => later, eventRetentionHours: 24 },
    );

    // Assess
    const counts = await countRows(database.db, result.clusterId);
    expect(result.kinds.events?.upserted).toBe(0);
    expect(counts.events).toBe(recent.length);
    expect(recent.length).toBeLessThan(inv.events?.length ?? 0);
  });
});

describe('node-host linkage', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  it('links by hostname first, then by IP, and never across environments', async () => {
    // Prepare
    const tenant = await createTenant(database.db, 'acme', 'production');
    const other = await queryOne<{ id: string }>(
      database.db,
      `insert into environments (client_id, slug, name) values ($1, 'staging', 'staging') returning id`,
      [tenant.clientId],
    );
    const inv = generateInventory({
      seed: 20,
      agentId: randomUUID(),
      nodes: 4,
    });
    const [byName, byIp, otherEnv, none] = inv.nodes ?? [];
    const ipOf = (n: typeof byIp) =>
      n?.addresses.find((a) => a.type === 'InternalIP')?.address;
    const hosts = [
      [tenant.environmentId, byName?.name.toUpperCase(), null],
      [tenant.environmentId, 'unrelated-host', ipOf(byIp)],
      [other.id, otherEnv?.name, ipOf(otherEnv)],
    ];
    for (const [env, hostname, ip] of hosts) {
      await query(
        database.db,
        `insert into hosts (client_id, environment_id, hostname, ip_address) values ($1, $2, $3, $4)`,
        [tenant.clientId, env, hostname, ip],
      );
    }

    // Act
    const result = await syncInventory(
      database.db,
      { clientSlug: 'acme', envSlug: 'production', agentId: inv.agent_id },
      inv,
      { now: () => new Date(inv.timestamp) },
    );

    // Assess
    const rows = await query<{ name: string; hostname: string | null }>(
      database.db,
      `select n.name, h.hostname from k8s_nodes n left join hosts h on h.id = n.host_id
       where n.cluster_id = $1`,
      [result.clusterId],
    );
    const linked = Object.fromEntries(rows.map((r) => [r.name, r.hostname]));
    expect(linked[byName?.name ?? '']).toBe(byName?.name.toUpperCase());
    expect(linked[byIp?.name ?? '']).toBe('unrelated-host');
    expect(linked[otherEnv?.name ?? '']).toBeNull();
    expect(linked[none?.name ?? '']).toBeNull();
    expect(result.linkage).toEqual({ linked: 2, unlinked: 2 });
  });

  it('passes over a node address with a zone, which no host can have, instead of refusing the snapshot', async () => {
    // Prepare
    const tenant = await createTenant(database.db);
    const inv = generateInventory({
      seed: 34,
      agentId: randomUUID(),
      nodes: 1,
    });
    const node = inv.nodes?.[0];
    if (!node) throw new Error('the generated inventory has a node');
    node.addresses = [{ type: 'InternalIP', address: 'fe80::1%eth0' }];

    // Act
    const result = await syncInventory(
      database.db,
      subjectOf(tenant, inv.agent_id),
      inv,
      { now: () => new Date(inv.timestamp) },
    );

    // Assess
    expect(result.outcome).toBe('applied');
    expect(result.linkage).toEqual({ linked: 0, unlinked: 1 });
  });

  it('links a node to a host registered after the first sync', async () => {
    // Prepare
    const tenant = await createTenant(database.db);
    const inv = generateInventory({
      seed: 21,
      agentId: randomUUID(),
      nodes: 2,
    });
    const subject = subjectOf(tenant, inv.agent_id);
    const first = await syncInventory(database.db, subject, inv, {
      now: () => new Date(inv.timestamp),
    });
    await query(
      database.db,
      `insert into hosts (client_id, environment_id, hostname) values ($1, $2, $3)`,
      [tenant.clientId, tenant.environmentId, inv.nodes?.[0]?.name],
    );

    // Act: the next snapshot, a minute later
    const later = new Date(Date.parse(inv.timestamp) + 60_000);
    const second = await syncInventory(
      database.db,
      subject,
      { ...inv, timestamp: later.toISOString() },
      { now: () => later },
    );

    // Assess
    expect(first.linkage).toEqual({ linked: 0, unlinked: 2 });
    expect(second.linkage).toEqual({ linked: 1, unlinked: 1 });
  });

  it('links an unchanged node by its address to a host registered after the first sync', async () => {
    // Prepare
    const tenant = await createTenant(database.db);
    const inv = generateInventory({
      seed: 35,
      agentId: randomUUID(),
      nodes: 2,
    });
    const subject = subjectOf(tenant, inv.agent_id);
    await syncInventory(database.db, subject, inv, {
      now: () => new Date(inv.timestamp),
    });
    const node = inv.nodes?.[1];
    const ip = node?.addresses.find((a) => a.type === 'InternalIP')?.address;
    await query(
      database.db,
      `insert into hosts (client_id, environment_id, hostname, ip_address) values ($1, $2, 'by-address', $3)`,
      [tenant.clientId, tenant.environmentId, ip],
    );

    // Act: the same nodes, a minute later
    const later = new Date(Date.parse(inv.timestamp) + 60_000);
    const result = await syncInventory(
      database.db,
      subject,
      { ...inv, timestamp: later.toISOString() },
      { now: () => later },
    );

    // Assess
    const linked = await queryOne<{ hostname: string | null }>(
      database.db,
      `select h.hostname from k8s_nodes n left join hosts h on h.id = n.host_id
       where n.cluster_id = $1 and n.name = $2`,
      [result.clusterId, node?.name],
    );
    expect(result.kinds.nodes?.upserted).toBe(0);
    expect(result.linkage).toEqual({ linked: 1, unlinked: 1 });
    expect(linked.hostname).toBe('by-address');
  });
});
