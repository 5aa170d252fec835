import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

/** A cluster with one Deployment whose replicas follow `replicas`. */
async function syncScale(
  database: TestDatabase,
  tenant: Tenant,
  agentId: string,
  minutes: number,
  replicas: number,
  workload = 'api',
): Promise<string> {
  const inventory = parseInventory({
    type: 'kubernetes',
    schema_version: 1,
    agent_id: agentId,
    timestamp: at(minutes),
    cluster: { name: `cluster-${agentId.slice(0, 4)}` },
    namespaces: [{ name: 'shop' }],
    workloads: [
      {
        namespace: 'shop',
        name: workload,
        kind: 'Deployment',
        spec_facts: {
          replicas,
          containers: [
            {
              name: 'api',
              image: 'api:1',
              env_names: [],
              env_from: [],
              volume_refs: [],
            },
          ],
          facts_version: 1,
        },
      },
    ],
  });
  const result = await syncInventory(
    database.db,
    { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
    inventory,
    { now: () => new Date(T0 + 3_600_000) },
  );
  return result.clusterId;
}

describe('GET /api/v1/changes', () => {
  let database: TestDatabase;
  let api: TestApi;
  let acmeProd: Tenant;
  let acmeStaging: Tenant;
  let other: Tenant;
  let prodCluster: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    acmeProd = await createTenant(database.db, 'acme', 'production');
    acmeStaging = await createTenant(database.db, 'acme', 'staging');
    other = await createTenant(database.db, 'globex', 'production');
    const prodAgent = randomUUID();
    prodCluster = await syncScale(database, acmeProd, prodAgent, 0, 3);
    await syncScale(database, acmeProd, prodAgent, 5, 4);
    await syncScale(database, acmeProd, prodAgent, 10, 6);
    const stagingAgent = randomUUID();
    await syncScale(database, acmeStaging, stagingAgent, 0, 1);
    await syncScale(database, acmeStaging, stagingAgent, 7, 2);
    const otherAgent = randomUUID();
    await syncScale(database, other, otherAgent, 0, 1);
    await syncScale(database, other, otherAgent, 5, 9);
    await insertGrant(database.db, {
      email: 'ops@acme.test',
      role: 'operator',
      clientId: acmeProd.clientId,
    });
    await insertGrant(database.db, {
      email: 'staging@acme.test',
      role: 'operator',
      clientId: acmeStaging.clientId,
      environmentId: acmeStaging.environmentId,
    });
    await insertGrant(database.db, {
      email: 'viewer@acme.test',
      role: 'viewer',
      clientId: acmeProd.clientId,
    });
  });
  afterAll(async () => {
    await api.close();
    await database.drop();
  });

  const window = `from=${encodeURIComponent(at(-60))}&to=${encodeURIComponent(at(60))}`;

  it('lists the client-wide caller’s changes newest first, and no other client’s', async () => {
    // Prepare
    const token = await api.token('ops@acme.test');

    // Act
    const res = await api.get(`/api/v1/changes?${window}`, token);

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data.map((c: { summary: string }) => c.summary)).toEqual([
      'Deployment shop/api scaled 4 → 6',
      'Deployment shop/api scaled 1 → 2',
      'Deployment shop/api scaled 3 → 4',
    ]);
    expect(res.body.meta).toMatchObject({ total: 3, page: 1, per_page: 50 });
  });

  it('gives an environment-scoped caller that environment only', async () => {
    // Prepare
    const token = await api.token('staging@acme.test');

    // Act
    const res = await api.get(`/api/v1/changes?${window}`, token);

    // Assess
    expect(res.status).toBe(200);
    expect(
      res.body.data.map((c: { environment_id: string }) => c.environment_id),
    ).toEqual([acmeStaging.environmentId]);
  });

  it('narrows by cluster, namespace and workload, and pages', async () => {
    // Prepare
    const token = await api.token('ops@acme.test');

    // Act
    const res = await api.get(
      `/api/v1/changes?${window}&cluster_id=${prodCluster}&namespace=shop&workload=api&event_type=workload_scaled&per_page=1&page=2`,
      token,
    );

    // Assess
    expect(res.status).toBe(200);
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0].summary).toBe('Deployment shop/api scaled 3 → 4');
    expect(res.body.meta).toMatchObject({ total: 2, page: 2, per_page: 1 });
  });

  it('refuses a caller without changes:read', async () => {
    // Prepare
    const token = await api.token('viewer@acme.test');

    // Act
    const res = await api.get(`/api/v1/changes?${window}`, token);

    // Assess
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('forbidden');
  });

  it.each([
    ['workload without namespace', 'workload=api', 'workload'],
    ['an unknown parameter', 'colour=blue', 'colour'],
    ['a repeated parameter', 'namespace=shop&namespace=web', 'namespace'],
    [
      'from after to',
      `from=${encodeURIComponent(at(10))}&to=${encodeURIComponent(at(0))}`,
      'from',
    ],
    ['a bad time', 'from=yesterday', 'from'],
  ])('answers 400 for %s', async (_case, qs, param) => {
    // Prepare
    const token = await api.token('ops@acme.test');

    // Act
    const res = await api.get(`/api/v1/changes?${qs}`, token);

    // Assess
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('bad_request');
    expect(res.body.error.details?.param).toBe(param);
  });
});
