import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Queryable, query } from '../../../shared/db/pool.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { listWorkloads } from '../../../shared/inventory/lists.ts';
import {
  getWorkload,
  listWorkloadPods,
} from '../../../shared/inventory/workloads.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRow, insertRows } from './seed.ts';

describe('inventory workloads', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;
  let otherClusterId: string;
  let workloadId: string;
  let otherWorkloadId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const tenant = await createTenant(db);
    clusterId = await createCluster(db, tenant);
    otherClusterId = await createCluster(db, tenant);
    workloadId = await insertRow(db, 'k8s_workloads', clusterId, {
      namespace: 'shop',
      name: 'checkout-api',
      kind: 'Deployment',
      replicas_desired: 3,
      replicas_ready: 2,
      helm_release: 'shop',
      spec_facts: { replicas: 3, facts_version: 1 },
      spec_facts_at: new Date('2026-04-05T12:00:00Z'),
      spec_facts_hash: 'abc',
      created_at: new Date('2026-01-02T03:04:05Z'),
    });
    otherWorkloadId = await insertRow(db, 'k8s_workloads', otherClusterId, {
      namespace: 'shop',
      name: 'checkout-api',
      kind: 'Deployment',
    });
    await insertRows(db, 'k8s_pods', clusterId, [
      { namespace: 'shop', name: 'checkout-api-1', workload_id: workloadId },
      { namespace: 'shop', name: 'checkout-api-2', workload_id: workloadId },
      { namespace: 'shop', name: 'cart-1', workload_id: null },
    ]);
    // Another cluster's pod that points at this cluster's workload.
    await insertRows(db, 'k8s_pods', otherClusterId, [
      { namespace: 'shop', name: 'checkout-api-9', workload_id: workloadId },
    ]);
  });
  afterAll(async () => {
    await database.drop();
  });

  it("returns the workload list's record", async () => {
    // Act
    const result = await getWorkload(db, clusterId, workloadId);

    // Assess
    const list = await listWorkloads(db, clusterId, {});
    expect(result.data).toEqual(list.data.parse()[0]);
    expect(result.data).toMatchObject({
      id: workloadId,
      cluster_id: clusterId,
      kind: 'Deployment',
      namespace: 'shop',
      name: 'checkout-api',
      replicas_desired: 3,
      helm_release: 'shop',
      spec_facts: { replicas: 3, facts_version: 1 },
      spec_facts_at: '2026-04-05T12:00:00.000Z',
      created_at: '2026-01-02T03:04:05.000Z',
      containers: [],
      conditions: [],
    });
    expect(result.data).not.toHaveProperty('spec_facts_hash');
    expect(result.data).not.toHaveProperty('content_hash');
  });

  it.each([
    ['a workload of another cluster', () => otherWorkloadId],
    ['an unknown id', () => randomUUID()],
    ['an id that is not a UUID', () => 'checkout-api'],
  ])('answers 404 for %s', async (_, id) => {
    // Act
    const result = getWorkload(db, clusterId, id());

    // Assess
    await expect(result).rejects.toBeInstanceOf(NotFoundError);
    await expect(result).rejects.toThrow('workload not found');
  });

  it('answers 404 once the sync pruned the workload', async () => {
    // Prepare
    const pruned = await insertRow(db, 'k8s_workloads', clusterId, {
      namespace: 'shop',
      name: 'old',
      kind: 'Deployment',
    });
    await query(db, 'delete from k8s_workloads where id = $1', [pruned]);

    // Act & Assess
    await expect(getWorkload(db, clusterId, pruned)).rejects.toThrow(
      'workload not found',
    );
  });

  it("lists the workload's pods of this cluster only", async () => {
    // Act
    const result = await listWorkloadPods(db, clusterId, workloadId, {});

    // Assess
    expect(result.data.parse().map((p) => p.name)).toEqual([
      'checkout-api-1',
      'checkout-api-2',
    ]);
    expect(result.meta).toEqual({ total: 2, page: 1, per_page: 50 });
  });

  it('takes the pods list parameters', async () => {
    // Act
    const result = await listWorkloadPods(db, clusterId, workloadId, {
      sort: '-name',
      per_page: '1',
    });

    // Assess
    expect(result.data.parse().map((p) => p.name)).toEqual(['checkout-api-2']);
    expect(result.meta.total).toBe(2);
  });

  it("lists none of this cluster's pods for its workload under another cluster", async () => {
    // Act
    const result = await listWorkloadPods(db, otherClusterId, workloadId, {});

    // Assess: only the other cluster's own pod that points at the workload
    // (the fixture's; a sync links pods to their cluster's workloads).
    expect(result.data.parse().map((p) => [p.name, p.cluster_id])).toEqual([
      ['checkout-api-9', otherClusterId],
    ]);
  });

  it.each([
    ['an unknown id', () => randomUUID()],
    ['an id that is not a UUID', () => 'x'],
  ])('has no pods for %s', async (_, workload) => {
    // Act
    const result = await listWorkloadPods(db, clusterId, workload(), {});

    // Assess
    expect(result.data.parse()).toEqual([]);
    expect(result.meta).toEqual({ total: 0, page: 1, per_page: 50 });
  });
});
