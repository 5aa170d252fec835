/**
 * The lists' own filters, and the one sort with a rule of its own (the
 * services' cluster_ip).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../../shared/db/pool.ts';
import {
  listJobs,
  listPods,
  listServices,
  listWorkloads,
} from '../../../shared/inventory/lists.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRows } from './seed.ts';

describe('inventory list filters', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    clusterId = await createCluster(db, await createTenant(db));
    await insertRows(db, 'k8s_workloads', clusterId, [
      { namespace: 'shop', name: 'web', kind: 'Deployment' },
      { namespace: 'shop', name: 'web', kind: 'StatefulSet' },
      { namespace: 'shop', name: 'db', kind: 'StatefulSet' },
      { namespace: 'ops', name: 'web', kind: 'Deployment' },
      { namespace: 'ops', name: 'agent', kind: 'DaemonSet' },
    ]);
    await insertRows(db, 'k8s_pods', clusterId, [
      { namespace: 'shop', name: 'web-1', phase: 'Running' },
      { namespace: 'shop', name: 'web-2', phase: 'Pending' },
      { namespace: 'shop', name: 'db-0', phase: 'Running' },
      { namespace: 'ops', name: 'web-1', phase: 'Running' },
      { namespace: 'ops', name: 'job-x', phase: 'Succeeded' },
    ]);
    await insertRows(db, 'k8s_jobs', clusterId, [
      { namespace: 'ops', name: 'backup', kind: 'CronJob' },
      { namespace: 'ops', name: 'backup-2901', kind: 'Job' },
      { namespace: 'ops', name: 'migrate', kind: 'Job' },
    ]);
    await insertRows(
      db,
      'k8s_services',
      clusterId,
      [
        '10.0.0.10',
        null,
        'None',
        '10.0.0.2',
        '2001:db8::10',
        '9.255.255.255',
        '2001:db8::1',
      ].map((ip, i) => ({
        namespace: 'shop',
        name: `svc-${i}`,
        cluster_ip: ip,
      })),
    );
  });
  afterAll(async () => {
    await database.drop();
  });

  it('sorts services by cluster_ip: IPv4 numerically, then other values as text, nulls last', async () => {
    // Act
    const ascending = await listServices(db, clusterId, { sort: 'cluster_ip' });
    const descending = await listServices(db, clusterId, {
      sort: '-cluster_ip',
    });

    // Assess
    expect(ascending.data.parse().map((s) => s.cluster_ip)).toEqual([
      '9.255.255.255',
      '10.0.0.2',
      '10.0.0.10',
      '2001:db8::1',
      '2001:db8::10',
      'None',
      null,
    ]);
    expect(descending.data.parse().map((s) => s.cluster_ip)).toEqual([
      'None',
      '2001:db8::10',
      '2001:db8::1',
      '10.0.0.10',
      '10.0.0.2',
      '9.255.255.255',
      null,
    ]);
  });

  it('filters workloads by namespace and kind, in the usual order', async () => {
    // Act
    const page = await listWorkloads(db, clusterId, {
      namespace: 'shop',
      kind: 'StatefulSet',
    });
    const all = await listWorkloads(db, clusterId, {});

    // Assess
    expect(
      page.data.parse().map((w) => `${w.namespace}/${w.kind}/${w.name}`),
    ).toEqual(['shop/StatefulSet/db', 'shop/StatefulSet/web']);
    expect(
      all.data.parse().map((w) => `${w.namespace}/${w.kind}/${w.name}`),
    ).toEqual([
      'ops/DaemonSet/agent',
      'ops/Deployment/web',
      'shop/Deployment/web',
      'shop/StatefulSet/db',
      'shop/StatefulSet/web',
    ]);
  });

  it('narrows the kind filter with q', async () => {
    // Act
    const page = await listWorkloads(db, clusterId, {
      kind: 'Deployment',
      q: 'shop',
    });

    // Assess
    expect(
      page.data.parse().map((w) => `${w.namespace}/${w.kind}/${w.name}`),
    ).toEqual(['shop/Deployment/web']);
    expect(page.meta.total).toBe(1);
  });

  it('filters pods by phase and narrows it with q', async () => {
    // Act
    const running = await listPods(db, clusterId, { phase: 'Running' });
    const runningWeb = await listPods(db, clusterId, {
      phase: 'Running',
      q: 'web',
    });

    // Assess
    expect(running.meta.total).toBe(3);
    expect(
      runningWeb.data.parse().map((p) => `${p.namespace}/${p.name}`),
    ).toEqual(['ops/web-1', 'shop/web-1']);
  });

  it('filters jobs by kind', async () => {
    // Act
    const page = await listJobs(db, clusterId, { kind: 'Job' });

    // Assess
    expect(page.data.parse().map((j) => j.name)).toEqual([
      'backup-2901',
      'migrate',
    ]);
  });

  it('treats an empty filter value as no filter', async () => {
    // Act
    const page = await listPods(db, clusterId, { namespace: '', phase: '' });

    // Assess
    expect(page.meta.total).toBe(5);
  });

  it.each([
    [
      'an unknown pod phase',
      () => listPods(db, clusterId, { phase: 'running' }),
      'phase',
    ],
    [
      'a lower-case kind',
      () => listWorkloads(db, clusterId, { kind: 'deployment' }),
      'kind',
    ],
    [
      'a repeated namespace',
      () => listPods(db, clusterId, { namespace: ['shop', 'ops'] }),
      'namespace',
    ],
    ['a page of zero', () => listPods(db, clusterId, { page: '0' }), 'page'],
    [
      'a per_page that is not a number',
      () => listPods(db, clusterId, { per_page: 'all' }),
      'per_page',
    ],
  ])('refuses %s as bad_request', async (_, read, param) => {
    // Act & Assess
    await expect(read()).rejects.toMatchObject({
      status: 400,
      code: 'bad_request',
      details: { param },
    });
  });

  it('clamps per_page to 500 and echoes it', async () => {
    // Act
    const page = await listPods(db, clusterId, { per_page: '10000' });

    // Assess
    expect(page.meta).toEqual({ total: 5, page: 1, per_page: 500 });
  });
});
