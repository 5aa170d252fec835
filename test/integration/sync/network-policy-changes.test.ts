import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import type { InventoryInput } from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  syncSnapshot,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

type Policy = NonNullable<InventoryInput['network_policies']>[number];

const allowWeb = (port: number, extra: Partial<Policy> = {}): Policy => ({
  namespace: 'shop',
  name: 'allow-web',
  pod_selector: { matchLabels: { app: 'api' } },
  policy_types: ['Ingress'],
  ingress: [
    {
      from: [{ podSelector: { matchLabels: { app: 'web' } } }],
      ports: [{ protocol: 'TCP', port }],
    },
  ],
  egress: [],
  ...extra,
});

describe('NetworkPolicy change records', () => {
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
    policies: Policy[] | undefined,
    workloadName = 'checkout-api',
  ) {
    return syncSnapshot(database.db, tenant, agentId, {
      timestamp: at(minutes),
      now: new Date(T0 + 3_600_000),
      body: {
        cluster: { name: 'k8s-prod-01', status: 'healthy' },
        namespaces: [{ name: 'shop', status: 'Active' }],
        workloads: [
          {
            namespace: 'shop',
            name: workloadName,
            kind: 'Deployment',
            containers: [],
          },
        ],
        ...(policies === undefined ? {} : { network_policies: policies }),
      },
    });
  }

  const rows = (clusterId: string) =>
    query<{ event_type: string; summary: string; details: object }>(
      database.db,
      `select source, event_type, client_id, environment_id, scanned_at,
              summary, details
       from change_events where details ->> 'cluster_id' = $1
       order by scanned_at`,
      [clusterId],
    );

  it('records a changed rule as one k8s-config row naming the policy', async () => {
    // Prepare
    const agent = randomUUID();
    await sync(agent, 0, [allowWeb(8080)]);

    // Act
    const result = await sync(agent, 5, [allowWeb(9090)]);

    // Assess
    const recorded = await rows(result.clusterId);
    expect(recorded).toEqual([
      {
        source: 'k8s-config',
        event_type: 'network_policy_changed',
        client_id: tenant.clientId,
        environment_id: tenant.environmentId,
        scanned_at: new Date(at(5)),
        summary:
          'NetworkPolicy shop/allow-web: ingress -from pods(app=web) on TCP/8080; ingress +from pods(app=web) on TCP/9090',
        details: {
          cluster_id: result.clusterId,
          cluster: 'k8s-prod-01',
          kind: 'NetworkPolicy',
          namespace: 'shop',
          name: 'allow-web',
          change_count: 2,
          truncated: false,
          changes: [
            {
              field: 'ingress',
              before: 'from pods(app=web) on TCP/8080',
              after: null,
            },
            {
              field: 'ingress',
              before: null,
              after: 'from pods(app=web) on TCP/9090',
            },
          ],
        },
      },
    ]);
  });

  it('records neither a creation, a deletion, a label-only edit nor a sync that did not collect policies', async () => {
    // Prepare
    const agent = randomUUID();
    const first = await sync(agent, 0, []);

    // Act
    await sync(agent, 5, [allowWeb(8080)]); // created
    await sync(agent, 10, [allowWeb(8080, { labels: { team: 'shop' } })]);
    await sync(agent, 15, undefined); // not collected: nothing pruned
    await sync(agent, 20, []); // deleted

    // Assess
    expect(await rows(first.clusterId)).toEqual([]);
  });

  it('records nothing for a redelivered older snapshot, and once for a replay of the newer one', async () => {
    // Prepare
    const agent = randomUUID();
    await sync(agent, 0, [allowWeb(8080)]);
    const changed = await sync(agent, 10, [allowWeb(9090)]);

    // Act
    await sync(agent, 5, [allowWeb(8080)]); // older, delivered late
    await sync(agent, 10, [allowWeb(9090)]); // replay

    // Assess
    const recorded = await rows(changed.clusterId);
    expect(recorded).toHaveLength(1);
    const stored = await query(
      database.db,
      `select ingress from k8s_network_policies where cluster_id = $1`,
      [changed.clusterId],
    );
    expect(stored).toEqual([
      {
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { app: 'web' } } }],
            ports: [{ protocol: 'TCP', port: 9090 }],
          },
        ],
      },
    ]);
  });
});
