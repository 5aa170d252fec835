import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Queryable, query } from '../../../shared/db/pool.ts';
import { InvalidParamError, NotFoundError } from '../../../shared/errors.ts';
import {
  getNode,
  listNodeCapacity,
  listNodePods,
  listNodes,
  NODE_CAPACITY_LIMIT,
} from '../../../shared/inventory/nodes.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRow, insertRows } from './seed.ts';

describe('inventory nodes', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;
  let otherClusterId: string;
  let emptyClusterId: string;
  let nodeA: string;
  let nodeB: string;
  let nodeC: string;
  let otherNode: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const tenant = await createTenant(db);
    clusterId = await createCluster(db, tenant);
    otherClusterId = await createCluster(db, tenant);
    emptyClusterId = await createCluster(db, tenant);
    const host = await query<{ id: string }>(
      db,
      `insert into hosts (client_id, environment_id, hostname)
       values ($1, $2, 'node-b') returning id`,
      [tenant.clientId, tenant.environmentId],
    );
    // Inserted out of name order: the reads order by name.
    nodeB = await insertRow(db, 'k8s_nodes', clusterId, {
      name: 'node-b',
      host_id: host[0]!.id,
      status: 'Ready',
      roles: ['control-plane'],
      allocatable_cpu_millicores: 4000,
      allocatable_memory_bytes: 16 * 2 ** 30,
      allocatable_pods: 110,
      usage_cpu_millicores: 0,
      usage_memory_bytes: 0,
      pod_count: null,
    });
    nodeA = await insertRow(db, 'k8s_nodes', clusterId, {
      name: 'node-a',
      status: 'Ready',
      roles: [],
      unschedulable: false,
      allocatable_cpu_millicores: 8000,
      allocatable_memory_bytes: 32 * 2 ** 30,
      allocatable_pods: 110,
      usage_cpu_millicores: 1500,
      usage_memory_bytes: 6 * 2 ** 30,
      pod_count: 4,
    });
    nodeC = await insertRow(db, 'k8s_nodes', clusterId, {
      name: 'node-c',
      status: 'NotReady',
      unschedulable: true,
      usage_cpu_millicores: null,
      usage_memory_bytes: null,
    });
    otherNode = await insertRow(db, 'k8s_nodes', otherClusterId, {
      name: 'node-a',
    });
    const pod = (
      namespace: string,
      name: string,
      nodeId: string | null,
      phase: string | null,
      cpu: number | null,
      memory: number | null,
    ) => ({
      namespace,
      name,
      node_id: nodeId,
      phase,
      cpu_requests_millicores: cpu,
      cpu_limits_millicores: cpu === null ? null : cpu * 2,
      memory_requests_bytes: memory,
      memory_limits_bytes: memory === null ? null : memory * 2,
    });
    await insertRows(db, 'k8s_pods', clusterId, [
      pod('shop', 'web-1', nodeA, 'Running', 250, 2 ** 28),
      pod('shop', 'web-2', nodeA, 'Pending', 250, 2 ** 28),
      pod('shop', 'web-3', nodeA, null, 100, null),
      pod('shop', 'done', nodeA, 'Succeeded', 1000, 2 ** 30),
      pod('shop', 'oom', nodeA, 'Failed', 1000, 2 ** 30),
      pod('ops', 'agent-b', nodeB, 'Running', null, null),
      pod('ops', 'agent-b2', nodeB, 'Unknown', 50, 2 ** 20),
      pod('ops', 'unscheduled', null, 'Pending', 500, 2 ** 29),
    ]);
    // Another cluster's pod that points at this cluster's node.
    await insertRows(db, 'k8s_pods', otherClusterId, [
      pod('shop', 'intruder', nodeA, 'Running', 9999, 2 ** 32),
    ]);
  });
  afterAll(async () => {
    await database.drop();
  });

  describe('listNodes', () => {
    it('returns every node of the cluster by name, with usage and host linkage', async () => {
      // Act
      const result = await listNodes(db, clusterId);

      // Assess
      expect(result.data.map((n) => n.name)).toEqual([
        'node-a',
        'node-b',
        'node-c',
      ]);
      expect(result.meta).toEqual({ total: 3 });
      const [a, b] = result.data;
      expect(a).toMatchObject({
        id: nodeA,
        cluster_id: clusterId,
        usage_cpu_millicores: 1500,
        usage_memory_bytes: 6 * 2 ** 30,
        allocatable_cpu_millicores: 8000,
        roles: [],
        host_id: null,
      });
      expect(b?.host_id).toEqual(expect.any(String));
      expect(a).not.toHaveProperty('content_hash');
      expect(a?.updated_at).toMatch(/^\d{4}-\d\d-\d\dT/);
    });

    it('reads a stored usage of 0 as null', async () => {
      // Act
      const result = await listNodes(db, clusterId);

      // Assess
      const b = result.data.find((n) => n.name === 'node-b');
      expect(b).toMatchObject({
        usage_cpu_millicores: null,
        usage_memory_bytes: null,
      });
    });

    it('returns nothing for a cluster without nodes', async () => {
      // Act & Assess
      expect(await listNodes(db, emptyClusterId)).toEqual({
        data: [],
        meta: { total: 0 },
      });
    });
  });

  describe('getNode', () => {
    it("returns the node list's record", async () => {
      // Act
      const result = await getNode(db, clusterId, nodeA);

      // Assess
      const list = await listNodes(db, clusterId);
      expect(result.data).toEqual(list.data[0]);
    });

    it.each([
      ['a node of another cluster', () => otherNode],
      ['an unknown id', () => randomUUID()],
      ['an id that is not a UUID', () => 'node-a'],
    ])('answers 404 for %s', async (_, nodeId) => {
      // Act
      const result = getNode(db, clusterId, nodeId());

      // Assess
      await expect(result).rejects.toThrow(NotFoundError);
      await expect(result).rejects.toThrow('node not found');
    });
  });

  describe('listNodeCapacity', () => {
    it('sums requests and limits over pods not Succeeded/Failed, per node', async () => {
      // Act
      const result = await listNodeCapacity(db, clusterId);

      // Assess
      expect(result.data.total).toBe(3);
      expect(result.data.truncated).toBe(false);
      expect(result.data.nodes).toEqual([
        {
          id: nodeA,
          name: 'node-a',
          status: 'Ready',
          roles: [],
          unschedulable: false,
          pod_count: 4,
          cpu_allocatable_millicores: 8000,
          cpu_requested_millicores: 600,
          cpu_limits_millicores: 1200,
          cpu_used_millicores: 1500,
          mem_allocatable_bytes: 32 * 2 ** 30,
          mem_requested_bytes: 2 ** 29,
          mem_limits_bytes: 2 ** 30,
          mem_used_bytes: 6 * 2 ** 30,
          pods_allocatable: 110,
        },
        {
          id: nodeB,
          name: 'node-b',
          status: 'Ready',
          roles: ['control-plane'],
          unschedulable: null,
          // No stored count: the pods on it not Succeeded/Failed.
          pod_count: 2,
          cpu_allocatable_millicores: 4000,
          cpu_requested_millicores: 50,
          cpu_limits_millicores: 100,
          cpu_used_millicores: null,
          mem_allocatable_bytes: 16 * 2 ** 30,
          mem_requested_bytes: 2 ** 20,
          mem_limits_bytes: 2 ** 21,
          mem_used_bytes: null,
          pods_allocatable: 110,
        },
        {
          id: nodeC,
          name: 'node-c',
          status: 'NotReady',
          roles: [],
          unschedulable: true,
          pod_count: 0,
          cpu_allocatable_millicores: null,
          cpu_requested_millicores: 0,
          cpu_limits_millicores: 0,
          cpu_used_millicores: null,
          mem_allocatable_bytes: null,
          mem_requested_bytes: 0,
          mem_limits_bytes: 0,
          mem_used_bytes: null,
          pods_allocatable: null,
        },
      ]);
    });

    it('returns an empty table for a cluster without nodes', async () => {
      // Act & Assess
      expect(await listNodeCapacity(db, emptyClusterId)).toEqual({
        data: { nodes: [], truncated: false, total: 0 },
      });
    });

    it('returns the first 1,000 nodes by name with the full total', async () => {
      // Prepare
      const big = await createCluster(db, await createTenant(db));
      await query(
        db,
        `insert into k8s_nodes (cluster_id, name, content_hash)
         select $1, 'node-' || lpad(n::text, 4, '0'), 'test'
         from generate_series(1, $2::int) n`,
        [big, NODE_CAPACITY_LIMIT + 5],
      );

      // Act
      const result = await listNodeCapacity(db, big);

      // Assess
      expect(result.data.total).toBe(NODE_CAPACITY_LIMIT + 5);
      expect(result.data.truncated).toBe(true);
      expect(result.data.nodes).toHaveLength(NODE_CAPACITY_LIMIT);
      expect(result.data.nodes[0]?.name).toBe('node-0001');
      expect(result.data.nodes.at(-1)?.name).toBe('node-1000');
    });
  });

  describe('listNodePods', () => {
    it("returns the node's pods of this cluster only", async () => {
      // Act
      const result = await listNodePods(db, clusterId, nodeA, {});

      // Assess
      expect(result.data.parse().map((p) => p.name)).toEqual([
        'done',
        'oom',
        'web-1',
        'web-2',
        'web-3',
      ]);
      expect(result.meta).toEqual({ total: 5, page: 1, per_page: 50 });
    });

    it('takes the pods list parameters', async () => {
      // Act
      const result = await listNodePods(db, clusterId, nodeA, {
        q: 'web',
        sort: '-cpu',
        per_page: '2',
      });

      // Assess
      expect(result.data.parse().map((p) => p.name)).toEqual([
        'web-1',
        'web-2',
      ]);
      expect(result.meta.total).toBe(3);
    });

    it.each([
      ['a node of another cluster', () => otherNode],
      ['an unknown id', () => randomUUID()],
      ['an id that is not a UUID', () => 'x'],
    ])('has no pods for %s', async (_, nodeId) => {
      // Act
      const result = await listNodePods(db, clusterId, nodeId(), {});

      // Assess
      expect(result.data.parse()).toEqual([]);
      expect(result.meta).toEqual({ total: 0, page: 1, per_page: 50 });
    });

    it("lists none of this cluster's pods for its node under another cluster", async () => {
      // Act
      const result = await listNodePods(db, otherClusterId, nodeA, {});

      // Assess: only the other cluster's own pod that points at the node
      // (the fixture's intruder; a sync links pods to their cluster's nodes).
      const pods = result.data.parse();
      expect(pods.map((p) => [p.name, p.cluster_id])).toEqual([
        ['intruder', otherClusterId],
      ]);
      expect(result.meta.total).toBe(1);
    });

    it('still checks the parameters for an id that is not a UUID', async () => {
      // Act & Assess
      await expect(
        listNodePods(db, clusterId, 'x', { sort: 'size' }),
      ).rejects.toBeInstanceOf(InvalidParamError);
    });
  });
});
