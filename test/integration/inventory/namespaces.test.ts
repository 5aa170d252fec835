import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../shared/db/pool.ts';
import {
  listNamespaces,
  listNamespaceUsage,
} from '../../../shared/inventory/namespaces.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRows } from './seed.ts';

describe('inventory namespaces', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;
  let otherClusterId: string;
  let emptyClusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const tenant = await createTenant(db);
    clusterId = await createCluster(db, tenant);
    otherClusterId = await createCluster(db, tenant);
    emptyClusterId = await createCluster(db, tenant);
    await insertRows(db, 'k8s_namespaces', clusterId, [
      { name: 'shop', status: 'Active' },
      { name: 'empty', status: 'Active' },
      { name: 'kube-system', status: 'Active' },
    ]);
    await insertRows(db, 'k8s_namespaces', otherClusterId, [{ name: 'shop' }]);
    const workloads = (namespace: string, count: number) =>
      Array.from({ length: count }, (_, i) => ({
        kind: 'Deployment',
        namespace,
        name: `app-${i}`,
      }));
    await insertRows(db, 'k8s_workloads', clusterId, [
      ...workloads('shop', 7),
      ...workloads('kube-system', 3),
    ]);
    await insertRows(db, 'k8s_workloads', otherClusterId, workloads('shop', 1));
    const pod = (
      name: string,
      phase: string | null,
      restarts: number | null,
      cpu: number | null,
      memory: number | null,
      namespace = 'shop',
    ) => ({
      namespace,
      name,
      phase,
      restart_count: restarts,
      cpu_requests_millicores: cpu,
      cpu_limits_millicores: cpu === null ? null : cpu + 1,
      memory_requests_bytes: memory,
      memory_limits_bytes: memory === null ? null : memory * 4,
    });
    await insertRows(db, 'k8s_pods', clusterId, [
      pod('web-1', 'Running', 2, 250, 2 ** 28),
      pod('web-2', 'Pending', null, 250, null),
      pod('done', 'Succeeded', 1, 1000, 2 ** 30),
      pod('oom', 'Failed', 5, 1000, 2 ** 30),
      pod('coredns', 'Running', 0, 100, 2 ** 26, 'kube-system'),
      // A pod whose namespace has no row is not a namespace of the list.
      pod('orphan', 'Running', 9, 9, 9, 'gone'),
    ]);
    await insertRows(db, 'k8s_pods', otherClusterId, [
      pod('web-1', 'Running', 50, 5000, 2 ** 33),
    ]);
  });
  afterAll(async () => {
    await database.drop();
  });

  it('lists every namespace by name with the counts the sync keeps', async () => {
    // Act
    const result = await listNamespaces(db, clusterId);

    // Assess
    expect(result.meta).toEqual({ total: 3 });
    expect(result.data.map((n) => n.name)).toEqual([
      'empty',
      'kube-system',
      'shop',
    ]);
    expect(result.data[2]).toMatchObject({
      cluster_id: clusterId,
      status: 'Active',
      workload_count: 7,
      pod_count: 4,
      service_count: 0,
      labels: {},
    });
    expect(result.data[2]).not.toHaveProperty('content_hash');
  });

  it('sums each namespace’s pods: totals over all, requests over the active', async () => {
    // Act
    const result = await listNamespaceUsage(db, clusterId);

    // Assess
    expect(result.data).toEqual([
      {
        name: 'empty',
        workload_count: 0,
        pods_total: 0,
        pods_running: 0,
        restarts: 0,
        cpu_requested_millicores: 0,
        cpu_limits_millicores: 0,
        mem_requested_bytes: 0,
        mem_limits_bytes: 0,
      },
      {
        name: 'kube-system',
        workload_count: 3,
        pods_total: 1,
        pods_running: 1,
        restarts: 0,
        cpu_requested_millicores: 100,
        cpu_limits_millicores: 101,
        mem_requested_bytes: 2 ** 26,
        mem_limits_bytes: 2 ** 28,
      },
      {
        name: 'shop',
        workload_count: 7,
        pods_total: 4,
        pods_running: 1,
        restarts: 8,
        cpu_requested_millicores: 500,
        cpu_limits_millicores: 502,
        mem_requested_bytes: 2 ** 28,
        mem_limits_bytes: 2 ** 30,
      },
    ]);
  });

  it('returns [] for a cluster without namespaces', async () => {
    // Act & Assess
    expect(await listNamespaceUsage(db, emptyClusterId)).toEqual({ data: [] });
    expect(await listNamespaces(db, emptyClusterId)).toEqual({
      data: [],
      meta: { total: 0 },
    });
  });
});
