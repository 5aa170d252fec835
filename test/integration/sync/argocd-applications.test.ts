import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import {
  type InventoryInput,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  syncSnapshot,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

type App = NonNullable<InventoryInput['argocd_applications']>[number];

const app = (name: string, server: string, extra: Partial<App> = {}): App => ({
  namespace: 'argocd',
  name,
  project: 'default',
  destination: { server, name: null, namespace: 'shop' },
  source: {
    repo_url: 'https://github.com/acme/shop.git',
    path: 'deploy',
    chart: null,
    target_revision: 'HEAD',
  },
  sync_status: 'Synced',
  health_status: 'Healthy',
  revision: '4f1c2d9e',
  operation: null,
  resources: [
    { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'api' },
    { group: '', kind: 'Service', namespace: 'shop', name: 'api' },
  ],
  ...extra,
});

describe('Argo CD Applications from the agent', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  async function sync(
    agentId: string,
    minutes: number,
    apps: App[] | undefined,
    apiServerUrl = 'https://hub.example:6443',
  ) {
    return syncSnapshot(database.db, tenant, agentId, {
      timestamp: at(minutes),
      now: new Date(T0 + 3_600_000),
      body: {
        cluster: {
          name: `c-${agentId.slice(0, 6)}`,
          status: 'healthy',
          api_server_url: apiServerUrl,
        },
        ...(apps === undefined ? {} : { argocd_applications: apps }),
      },
    });
  }

  const stored = (clusterId: string) =>
    query<{
      name: string;
      mapped_cluster_id: string | null;
      resources: string[];
    }>(
      database.db,
      `select a.name, a.mapped_cluster_id,
              coalesce(array_agg(r.kind || ' ' || r.namespace || '/' || r.name
                                 order by r.kind) filter (where r.kind is not null), '{}') as resources
       from argocd_applications a
       left join argocd_application_resources r on r.application_id = a.id
       where a.cluster_id = $1
       group by a.id order by a.name`,
      [clusterId],
    );

  it('maps an Application to the cluster whose API server it deploys to, or to the reporting one in-cluster', async () => {
    // Prepare: a destination cluster registered first
    const spoke = await sync(randomUUID(), 0, [], 'https://10.0.0.7:6443');

    // Act
    const hub = await sync(randomUUID(), 1, [
      app('in-cluster', 'https://kubernetes.default.svc'),
      app('remote', 'https://10.0.0.7:6443/'),
      app('unknown', 'https://10.9.9.9:6443'),
    ]);

    // Assess
    expect(await stored(hub.clusterId)).toEqual([
      {
        name: 'in-cluster',
        mapped_cluster_id: hub.clusterId,
        resources: ['Deployment shop/api', 'Service shop/api'],
      },
      {
        name: 'remote',
        mapped_cluster_id: spoke.clusterId,
        resources: ['Deployment shop/api', 'Service shop/api'],
      },
      {
        name: 'unknown',
        mapped_cluster_id: null,
        resources: ['Deployment shop/api', 'Service shop/api'],
      },
    ]);
  });

  it('upserts then prunes, rewrites resources of a changed app, and prunes nothing when the array is missing', async () => {
    // Prepare
    const agent = randomUUID();
    const first = await sync(agent, 0, [
      app('a', 'https://kubernetes.default.svc'),
      app('b', 'https://kubernetes.default.svc'),
    ]);

    // Act
    await sync(agent, 1, [
      app('a', 'https://kubernetes.default.svc', {
        resources: [
          { group: 'apps', kind: 'StatefulSet', namespace: 'shop', name: 'db' },
        ],
      }),
    ]);
    const afterPrune = await stored(first.clusterId);
    await sync(agent, 2, undefined);

    // Assess
    expect(afterPrune).toEqual([
      {
        name: 'a',
        mapped_cluster_id: first.clusterId,
        resources: ['StatefulSet shop/db'],
      },
    ]);
    expect(await stored(first.clusterId)).toEqual(afterPrune);
  });

  it('refuses a message whose repo_url still carries credentials, storing nothing of it', () => {
    // Act
    const parse = () =>
      parseInventory({
        type: 'kubernetes',
        schema_version: 1,
        agent_id: randomUUID(),
        timestamp: at(0),
        cluster: { name: 'c' },
        argocd_applications: [
          app('leaky', 'https://kubernetes.default.svc', {
            source: {
              repo_url: 'https://deploy:ghp_token@github.com/acme/shop.git',
              path: null,
              chart: null,
              target_revision: null,
            },
          }),
        ],
      });

    // Assess
    expect(parse).toThrow(RejectedInventoryError);
    expect(parse).toThrow(/source\.repo_url: carries credentials/);
    expect(parse).not.toThrow(/ghp_token/);
  });
});
