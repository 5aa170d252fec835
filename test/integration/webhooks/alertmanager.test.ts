import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { addWebhookSource } from '../../../shared/webhooks/sources.ts';
import {
  startAlertmanager,
  type TestAlertmanager,
} from '../../helpers/alertmanager.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

interface GroupRow extends Record<string, unknown> {
  id: string;
  status: string;
  severity: string | null;
  title: string;
  detail: string | null;
  labels: Record<string, string>;
  alert_labels: Record<string, string>[];
  first_fired_at: Date;
  resolved_at: Date | null;
  last_notified_at: Date;
  environment_id: string | null;
  host_id: string | null;
}

/**
 * A real Alertmanager delivers to the webhook route, grouping, repeating
 * and resolving as it does in production.
 */
describe('Alertmanager → alert groups, through a real Alertmanager', () => {
  let database: TestDatabase;
  let api: TestApi;
  let alertmanager: TestAlertmanager;
  let tenant: Tenant;
  let hostId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    tenant = await createTenant(database.db);
    const host = await queryOne<{ id: string }>(
      database.db,
      `insert into hosts (client_id, environment_id, hostname, ip_address)
       values ($1, $2, 'db-1.example.internal', '10.42.1.17') returning id`,
      [tenant.clientId, tenant.environmentId],
    );
    hostId = host.id;
    const source = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      kind: 'alertmanager',
    });
    alertmanager = await startAlertmanager({
      webhookUrl: `${api.server.url}/api/v1/webhooks/${source.id}`,
      secret: source.secret,
      groupBy: ['alertname', 'namespace'],
      timings: { groupWait: '1s', groupInterval: '2s', repeatInterval: '3s' },
    });
  }, 60_000);
  afterAll(async () => {
    await alertmanager?.stop();
    await api?.close();
    await database?.drop();
  });

  const groups = () =>
    query<GroupRow>(
      database.db,
      `select id, status, severity, title, detail, labels, alert_labels,
              first_fired_at, resolved_at, last_notified_at, environment_id, host_id
       from alert_groups where client_id = $1
       order by first_fired_at, created_at`,
      [tenant.clientId],
    );

  const crashLooping = (pod: string, startsAt: string, endsAt?: string) => ({
    labels: {
      alertname: 'KubePodCrashLooping',
      namespace: 'payments',
      pod,
      container: 'postgres',
      instance: '10.42.1.17:8080',
      severity: 'critical',
    },
    annotations: { summary: `${pod} is crash-looping` },
    startsAt,
    ...(endsAt ? { endsAt } : {}),
  });

  it('groups, repeats without duplicating, resolves, and opens a new episode when the group fires again', async () => {
    // Prepare
    const t0 = new Date(Date.now() - 120_000).toISOString();
    const t1 = new Date(Date.now() - 60_000).toISOString();

    // Act: two alerts of one group fire
    await alertmanager.postAlerts([
      crashLooping('ledger-db-1', t1),
      crashLooping('ledger-db-2', t0),
    ]);

    // Assess: one firing episode, both alerts in it
    const [firing] = await eventually(
      'one firing episode with both alerts',
      async () => {
        const rows = await groups();
        expect(rows).toHaveLength(1);
        expect(rows[0]?.alert_labels).toHaveLength(2);
        return rows;
      },
      30_000,
    );
    expect(firing).toMatchObject({
      status: 'firing',
      severity: 'critical',
      title: 'KubePodCrashLooping',
      first_fired_at: new Date(t0),
      resolved_at: null,
      environment_id: tenant.environmentId,
      host_id: hostId,
      labels: {
        alertname: 'KubePodCrashLooping',
        namespace: 'payments',
        container: 'postgres',
        instance: '10.42.1.17:8080',
        severity: 'critical',
      },
    });
    expect(firing?.detail).toMatch(/^ledger-db-[12] is crash-looping$/);

    // Act: the repeat interval elapses; Alertmanager sends the group again
    const firstNotified = firing?.last_notified_at.getTime() ?? 0;
    await eventually(
      'a repeated notification',
      async () => {
        const rows = await groups();
        expect(rows).toHaveLength(1);
        expect(rows[0]?.last_notified_at.getTime()).toBeGreaterThan(
          firstNotified,
        );
        return true;
      },
      30_000,
    );

    // Act: both alerts end
    const ended = new Date(Date.now() - 1_000).toISOString();
    await alertmanager.postAlerts([
      crashLooping('ledger-db-1', t1, ended),
      crashLooping('ledger-db-2', t0, ended),
    ]);

    // Assess: the same row, resolved at the alerts' end
    await eventually(
      'the resolve',
      async () => {
        const rows = await groups();
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({
          id: firing?.id,
          status: 'resolved',
          resolved_at: new Date(ended),
        });
        return true;
      },
      30_000,
    );

    // Act: the group fires again
    const t2 = new Date().toISOString();
    await alertmanager.postAlerts([crashLooping('ledger-db-2', t2)]);

    // Assess: a new episode; the old one stays resolved
    await eventually(
      'a new episode',
      async () => {
        const rows = await groups();
        expect(rows.map((r) => r.status)).toEqual(['resolved', 'firing']);
        expect(rows[1]?.first_fired_at).toEqual(new Date(t2));
        expect(rows[1]?.alert_labels).toHaveLength(1);
        return true;
      },
      30_000,
    );
  }, 120_000);
});
