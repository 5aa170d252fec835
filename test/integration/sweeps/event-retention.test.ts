import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/sweeps/event-retention.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { MetricName, metrics } from '../../../shared/observability/metrics.ts';
import { expireEvents } from '../../../shared/sweeps/event-retention.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { captureStdout, holdClusterLock, syncedCluster } from './support.ts';

const HOUR = 3_600_000;

describe('event retention sweep', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(async () => {
    setDb(undefined);
    await database.drop();
  });

  async function eventNames(clusterId: string): Promise<string[]> {
    const rows = await query<{ name: string }>(
      database.db,
      'select name from k8s_events where cluster_id = $1 order by name',
      [clusterId],
    );
    return rows.map((r) => r.name);
  }

  /** Sets the times of four events: old by last_seen, by first_seen, by created_at, and recent. */
  async function stampEvents(clusterId: string, now: Date) {
    const names = (await eventNames(clusterId)).slice(0, 4);
    expect(names).toHaveLength(4);
    const old = new Date(now.getTime() - 30 * HOUR);
    const recent = new Date(now.getTime() - HOUR);
    const [byLastSeen, byFirstSeen, byCreated, fresh] = names as [
      string,
      string,
      string,
      string,
    ];
    const set = (
      name: string,
      last: Date | null,
      first: Date | null,
      created: Date | null,
    ) =>
      query(
        database.db,
        `update k8s_events set last_seen = $3, first_seen = $4, created_at = $5
         where cluster_id = $1 and name = $2`,
        [clusterId, name, last, first, created],
      );
    await set(byLastSeen, old, recent, recent);
    await set(byFirstSeen, null, old, recent);
    await set(byCreated, null, null, old);
    await set(fresh, recent, old, old);
    // Every other event of the cluster is recent.
    await query(
      database.db,
      `update k8s_events set last_seen = $2
       where cluster_id = $1 and not (name = any($3))`,
      [clusterId, recent, names],
    );
    return { expired: [byLastSeen, byFirstSeen, byCreated], kept: fresh };
  }

  it('deletes events last seen (else first seen, else created) before the retention period', async () => {
    // Prepare
    const now = new Date();
    const { clusterId } = await syncedCluster(database.db, tenant, now);
    const before = await eventNames(clusterId);
    const { expired, kept } = await stampEvents(clusterId, now);

    // Act
    const result = await expireEvents(database.db, {
      retentionHours: 24,
      historyDays: 14,
      now,
    });

    // Assess
    expect(result.deleted).toBe(3);
    const after = await eventNames(clusterId);
    for (const name of expired) expect(after).not.toContain(name);
    expect(after).toContain(kept);
    expect(after).toHaveLength(before.length - 3);
  });

  it('is idempotent: a second run deletes nothing', async () => {
    // Prepare
    const now = new Date();
    const { clusterId } = await syncedCluster(database.db, tenant, now);
    await stampEvents(clusterId, now);
    await expireEvents(database.db, {
      retentionHours: 24,
      historyDays: 14,
      now,
    });
    const before = await eventNames(clusterId);

    // Act
    const again = await expireEvents(database.db, {
      retentionHours: 24,
      historyDays: 14,
      now,
    });

    // Assess
    expect(again.deleted).toBe(0);
    expect(await eventNames(clusterId)).toEqual(before);
  });

  it('leaves a cluster a sync holds for the next run instead of blocking', async () => {
    // Prepare
    const now = new Date();
    const { clusterId } = await syncedCluster(database.db, tenant, now);
    await stampEvents(clusterId, now);
    const sync = await holdClusterLock(database.db, clusterId);

    // Act
    const started = Date.now();
    const during = await expireEvents(database.db, {
      retentionHours: 24,
      historyDays: 14,
      now,
      lockWaitMs: 300,
    });
    const tookMs = Date.now() - started;
    sync.release();
    await sync.done;
    const later = await expireEvents(database.db, {
      retentionHours: 24,
      historyDays: 14,
      now,
    });

    // Assess
    expect(during.deferred).toBeGreaterThanOrEqual(1);
    expect(tookMs).toBeLessThan(5_000);
    expect(later.deleted).toBeGreaterThanOrEqual(3);
    const left = await queryOne<{ n: number }>(
      database.db,
      `select count(*)::int as n from k8s_events where cluster_id = $1
       and coalesce(last_seen, first_seen, created_at) < $2`,
      [clusterId, new Date(now.getTime() - 24 * HOUR)],
    );
    expect(left.n).toBe(0);
  });

  it('runs beside syncs of the same clusters without deadlock or lost rows', async () => {
    // Prepare
    const now = new Date();
    const clusters = await Promise.all(
      [0, 1, 2].map(() => syncedCluster(database.db, tenant, now)),
    );
    for (const c of clusters) await stampEvents(c.clusterId, now);

    // Act: resyncs (newer snapshots) and sweeps at once, a few rounds.
    const work: Promise<unknown>[] = [];
    for (let round = 1; round <= 3; round++) {
      const at = new Date(now.getTime() + round * 1000);
      for (const c of clusters) {
        work.push(syncedCluster(database.db, tenant, at, c.agentId));
      }
      work.push(
        expireEvents(database.db, {
          retentionHours: 24,
          historyDays: 14,
          now: at,
        }),
      );
    }
    const results = await Promise.allSettled(work);

    // Assess
    expect(results.filter((r) => r.status === 'rejected')).toEqual([]);
    for (const c of clusters) {
      const row = await queryOne<{ agent_status: string; n: number }>(
        database.db,
        `select agent_status,
                (select count(*)::int from k8s_events where cluster_id = c.id) as n
         from clusters c where id = $1`,
        [c.clusterId],
      );
      expect(row.agent_status).toBe('connected');
      expect(row.n).toBeGreaterThan(0);
    }
  });

  it('emits proxima_k8s_events_expired_total from the Lambda handler', async () => {
    // Prepare
    setDb(database.as('sweeps').db, 'sweeps');
    await expireEvents(database.db, { retentionHours: 24, historyDays: 14 });
    const now = new Date();
    const { clusterId } = await syncedCluster(database.db, tenant, now);
    await stampEvents(clusterId, now);
    // Metrics the direct calls above stored are not this run's.
    metrics.clearMetrics();
    const out = captureStdout();

    // Act
    let result: Awaited<ReturnType<typeof handler>>;
    try {
      result = await handler({}, lambdaContext('event-retention'));
    } finally {
      out.restore();
    }

    // Assess
    expect(result.deleted).toBe(3);
    expect(out.metric(MetricName.eventsExpired)).toEqual([3]);
  });
});
