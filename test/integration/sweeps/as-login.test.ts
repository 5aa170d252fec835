/**
 * Both sweeps' Lambda handlers under the login they have in AWS (the
 * maintenance group role's), with rows old enough for every step to act:
 * a grant missing from shared/db/roles.ts fails here with SQLSTATE 42501.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as retentionHandler } from '../../../functions/sweeps/event-retention.ts';
import { handler as staleHandler } from '../../../functions/sweeps/stale-clusters.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { insertAudit } from '../../../shared/live/audit.ts';
import { insertAuditedCluster } from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import type { LoginDb } from '../../helpers/logins.ts';
import { captureStdout, holdClusterLock, syncedCluster } from './support.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const ago = (ms: number) => new Date(Date.now() - ms);

describe('the sweeps under their production login', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let sweeps: LoginDb;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    sweeps = database.as('sweeps');
    setDb(sweeps.db, 'sweeps');
  });
  afterAll(async () => {
    setDb(undefined);
    await database.drop();
  });

  async function run<T>(fn: () => Promise<T>): Promise<T> {
    const out = captureStdout();
    try {
      return await fn();
    } finally {
      out.restore();
    }
  }

  /** Makes the first `n` events of the cluster 30 hours old. */
  async function ageEvents(clusterId: string, n: number): Promise<void> {
    await query(
      database.db,
      `update k8s_events set last_seen = $2
        where id in (select id from k8s_events where cluster_id = $1
                      order by name limit $3)`,
      [clusterId, ago(30 * HOUR), n],
    );
  }

  it('connects as a login of the maintenance group role, not the owner', async () => {
    const row = await queryOne<{ user: string; owner: boolean }>(
      sweeps.db,
      `select current_user as user,
              (select rolsuper from pg_roles where rolname = current_user) as owner`,
    );
    expect(row).toEqual({ user: sweeps.username, owner: false });
  });

  it('runs the retention sweep whole: events (both lock passes), history partitions, rate-limit windows, changes, alert groups, audit rows', async () => {
    // Prepare: every step has something to delete.
    const free = await syncedCluster(database.db, tenant, new Date());
    const busy = await syncedCluster(database.db, tenant, new Date());
    await ageEvents(free.clusterId, 2);
    await ageEvents(busy.clusterId, 1);
    await query(
      database.db,
      'select k8s_event_history_ensure_partitions($1::date, $1::date)',
      [
        ago(40 * DAY)
          .toISOString()
          .slice(0, 10),
      ],
    );
    await query(
      database.db,
      `insert into api_rate_limits (subject, family, window_start, hits)
       values ($1, 'reads', $2, 3)`,
      [`sub-${randomUUID()}`, ago(2 * HOUR)],
    );
    await query(
      database.db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, created_at, summary)
       values ('k8s-config', 'workload_changed', $1, $2, $3, $3, 'old')`,
      [tenant.clientId, tenant.environmentId, ago(120 * DAY)],
    );
    const source = await queryOne<{ id: string }>(
      database.db,
      `insert into webhook_sources (client_id, kind, secret_sha256)
       values ($1, 'alertmanager', sha256('s')) returning id`,
      [tenant.clientId],
    );
    await query(
      database.db,
      `insert into alert_groups (source_id, client_id, group_key, status, title,
         first_fired_at, last_notified_at, updated_at)
       values ($1, $2, 'g', 'resolved', 'A', $3, $3, $3)`,
      [source.id, tenant.clientId, ago(120 * DAY)],
    );
    const audited = await insertAuditedCluster(database.db);
    const auditId = await insertAudit(database.db, audited, {
      outcome: 'ok',
      status: 200,
      durationMs: 5,
      bytes: 10,
    });
    await query(
      database.db,
      'update live_read_audit set at = $2 where id = $1',
      [auditId, ago(500 * DAY)],
    );
    // A sync holds the busy cluster until the sweep waits for it (its
    // second pass), so both lock statements run.
    const sync = await holdClusterLock(database.db, busy.clusterId);
    const waiting = eventually('the sweep waiting for the held cluster', () =>
      queryMaybeWaiting(sweeps.username),
    ).then(sync.release, (error: unknown) => {
      sync.release();
      throw error;
    });

    // Act
    const result = await run(() =>
      retentionHandler({}, lambdaContext('event-retention')),
    );
    await waiting;
    await sync.done;

    // Assess
    expect(result).toMatchObject({
      deleted: 3,
      deferred: 0,
      rateLimitWindows: 1,
      changeRetention: { changes: 1, alertGroups: 1 },
      auditDeleted: 1,
    });
    expect(result.clusters).toBeGreaterThanOrEqual(2);
    expect(result.partitions.dropped).toBeGreaterThanOrEqual(1);
  });

  it('runs the stale-cluster sweep whole', async () => {
    // Prepare: a connected cluster silent for an hour.
    const { clusterId } = await syncedCluster(database.db, tenant, ago(HOUR));
    await query(
      database.db,
      'update clusters set last_received_at = $2 where id = $1',
      [clusterId, ago(HOUR)],
    );

    // Act
    const result = await run(() =>
      staleHandler({}, lambdaContext('stale-clusters')),
    );

    // Assess
    expect(result.clusterIds).toContain(clusterId);
    const row = await queryOne<{ agent_status: string }>(
      database.db,
      'select agent_status from clusters where id = $1',
      [clusterId],
    );
    expect(row.agent_status).toBe('disconnected');
  });

  /** Whether a session of `user` waits on a lock. */
  async function queryMaybeWaiting(user: string): Promise<boolean> {
    const row = await queryOne<{ n: number }>(
      database.db,
      `select count(*)::int as n from pg_stat_activity
        where usename = $1 and wait_event_type = 'Lock'`,
      [user],
    );
    return row.n > 0;
  }
});
