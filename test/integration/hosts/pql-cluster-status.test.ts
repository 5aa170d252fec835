/**
 * GET /api/v1/hosts with the spec's PQL example `cluster.status = "healthy"`
 * (PQL Search: cluster.status is the health status the cluster's agent
 * reports, clusters.status): over real rows, a host running a node of a
 * healthy cluster matches, one running a node of a degraded cluster does
 * not, and a host that runs no node never matches a cluster field.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOne } from '../../../shared/db/pool.ts';
import { addHost } from '../../../shared/hosts/repo.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  syncSnapshot,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const AT = new Date('2026-06-15T12:00:00Z');

/** Syncs a cluster reporting `status` whose one node is `node`. */
async function syncCluster(
  database: TestDatabase,
  tenant: Tenant,
  name: string,
  status: 'healthy' | 'degraded',
  node: string,
): Promise<string> {
  const result = await syncSnapshot(database.db, tenant, randomUUID(), {
    timestamp: AT.toISOString(),
    now: AT,
    body: {
      cluster: { name, version: 'v1.29.4', platform: 'rke2', status },
      nodes: [{ name: node, status: 'Ready' }],
    },
  });
  return result.clusterId;
}

describe('PQL cluster.status', () => {
  let database: TestDatabase;
  let api: TestApi;
  let token: string;
  const clusters: Record<string, string> = {};

  const hosts = (pql: string) =>
    api.get(`/api/v1/hosts?pql=${encodeURIComponent(pql)}`, token);
  const names = (body: { data: { hostname: string }[] }) =>
    body.data.map((h) => h.hostname);

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    api = await startTestApi(db);
    const tenant = await createTenant(db, 'acme', 'production');
    for (const hostname of ['node-healthy', 'node-degraded', 'no-node']) {
      await addHost(db, {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        hostname,
        os: 'Ubuntu',
      });
    }
    clusters.healthy = await syncCluster(
      database,
      tenant,
      'k8s-healthy',
      'healthy',
      'node-healthy',
    );
    clusters.degraded = await syncCluster(
      database,
      tenant,
      'k8s-degraded',
      'degraded',
      'node-degraded',
    );
    await insertGrant(db, {
      email: 'viewer@example.test',
      role: 'viewer',
      clientId: tenant.clientId,
    });
    token = await api.token('viewer@example.test');
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('matches a host on a healthy cluster and not one on a degraded cluster', async () => {
    // Act
    const healthy = await hosts('cluster.status = "healthy"');
    const degraded = await hosts('cluster.status = "degraded"');
    const notHealthy = await hosts('cluster.status != "healthy"');

    // Assess
    expect(healthy.status, healthy.text).toBe(200);
    expect(names(healthy.body)).toEqual(['node-healthy']);
    expect(healthy.body.data[0].nodes).toEqual([
      expect.objectContaining({
        cluster_id: clusters.healthy,
        cluster_name: 'k8s-healthy',
        node_name: 'node-healthy',
      }),
    ]);
    expect(healthy.body.meta.total).toBe(1);
    expect(names(degraded.body)).toEqual(['node-degraded']);
    expect(names(notHealthy.body)).toEqual(['node-degraded']);
    // The column the filter reads holds what each agent reported.
    for (const [status, id] of Object.entries(clusters)) {
      const row = await queryOne<{ status: string }>(
        database.db,
        'select status from clusters where id = $1',
        [id],
      );
      expect(row.status).toBe(status);
    }
  });
});
