import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/sweeps/stale-clusters.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query, queryOne, withTransaction } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { MetricName, metrics } from '../../../shared/observability/metrics.ts';
import { markStaleClusters } from '../../../shared/sweeps/stale-clusters.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { captureStdout, holdClusterLock, syncedCluster } from './support.ts';

const MINUTE = 60_000;

describe('stale-cluster sweep', () => {
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

  async function statusOf(clusterId: string) {
    return queryOne<{ agent_status: string; updated_at: Date }>(
      database.db,
      'select agent_status, updated_at from clusters where id = $1',
      [clusterId],
    );
  }

  it('marks clusters silent for longer than the threshold disconnected, and only them', async () => {
    // Prepare
    const now = new Date();
    const stale = await syncedCluster(
      database.db,
      tenant,
      new Date(now.getTime() - 20 * MINUTE),
    );
    const fresh = await syncedCluster(
      database.db,
      tenant,
      new Date(now.getTime() - 5 * MINUTE),
    );

    // Act
    const result = await markStaleClusters(database.db, {
      staleMinutes: 15,
      now,
    });

    // Assess
    expect(result.clusterIds).toContain(stale.clusterId);
    expect(result.clusterIds).not.toContain(fresh.clusterId);
    expect((await statusOf(stale.clusterId)).agent_status).toBe('disconnected');
    expect((await statusOf(fresh.clusterId)).agent_status).toBe('connected');
  });

  it('is idempotent: a second run changes nothing', async () => {
    // Prepare
    const now = new Date();
    const stale = await syncedCluster(
      database.db,
      tenant,
      new Date(now.getTime() - 60 * MINUTE),
    );
    await markStaleClusters(database.db, { staleMinutes: 15, now });
    const before = await statusOf(stale.clusterId);

    // Act
    const again = await markStaleClusters(database.db, {
      staleMinutes: 15,
      now,
    });

    // Assess
    expect(again.marked).toBe(0);
    const after = await statusOf(stale.clusterId);
    expect(after.agent_status).toBe('disconnected');
    expect(after.updated_at).toEqual(before.updated_at);
  });

  it('reconnects nothing by itself: a new sync marks the cluster connected again', async () => {
    // Prepare
    const now = new Date();
    const old = new Date(now.getTime() - 30 * MINUTE);
    const stale = await syncedCluster(database.db, tenant, old);
    await markStaleClusters(database.db, { staleMinutes: 15, now });

    // Act
    await syncedCluster(database.db, tenant, now, stale.agentId);

    // Assess
    expect((await statusOf(stale.clusterId)).agent_status).toBe('connected');
  });

  it('does not wait for, nor flip, a cluster a sync is updating', async () => {
    // Prepare
    const now = new Date();
    const stale = await syncedCluster(
      database.db,
      tenant,
      new Date(now.getTime() - 40 * MINUTE),
    );
    // What the sync does under its lock: connected, seen now.
    const sync = await holdClusterLock(database.db, stale.clusterId, (tx) =>
      query(
        tx,
        `update clusters set agent_status = 'connected', last_seen_at = $2,
           last_received_at = $2
         where id = $1`,
        [stale.clusterId, now],
      ),
    );

    // Act
    const started = Date.now();
    const result = await markStaleClusters(database.db, {
      staleMinutes: 15,
      now,
    });
    const tookMs = Date.now() - started;
    sync.release();
    await sync.done;

    // Assess
    expect(result.clusterIds).not.toContain(stale.clusterId);
    expect(tookMs).toBeLessThan(5_000);
    expect((await statusOf(stale.clusterId)).agent_status).toBe('connected');
  });

  it('skips a row whose sync committed after the sweep read it', async () => {
    // Prepare: the sweep's statement sees the old row, the sync commits a
    // newer receipt time before the sweep locks it.
    const now = new Date();
    const stale = await syncedCluster(
      database.db,
      tenant,
      new Date(now.getTime() - 40 * MINUTE),
    );
    let commit!: () => void;
    const committing = new Promise<void>((resolve) => {
      commit = resolve;
    });
    let updated!: () => void;
    const rowLocked = new Promise<void>((resolve) => {
      updated = resolve;
    });
    const sync = withTransaction(database.db, async (tx) => {
      await query(
        tx,
        `update clusters set agent_status = 'connected', last_seen_at = $2,
           last_received_at = $2
         where id = $1`,
        [stale.clusterId, now],
      );
      updated();
      await committing;
    });
    // The sync holds the row before the sweep's statement starts.
    await rowLocked;
    // A sweep without SKIP LOCKED would wait here; ours skips, so run one
    // with a blocking lock by hand to prove the re-check on the new row.
    const blocking = withTransaction(database.db, (tx) =>
      query<{ id: string }>(
        tx,
        `update clusters set agent_status = 'disconnected'
         where id in (
           select id from clusters
           where agent_status = 'connected' and last_received_at < $1 and id = $2
           for no key update)
         returning id`,
        [new Date(now.getTime() - 15 * MINUTE), stale.clusterId],
      ),
    );
    await eventually('the sweep statement to wait on the row', async () => {
      const [row] = await query<{ n: number }>(
        database.db,
        `select count(*)::int as n from pg_stat_activity
         where datname = current_database() and wait_event_type = 'Lock'`,
      );
      return (row?.n ?? 0) > 0;
    });

    // Act
    commit();
    await sync;
    const flipped = await blocking;
    const result = await markStaleClusters(database.db, {
      staleMinutes: 15,
      now,
    });

    // Assess
    expect(flipped).toEqual([]);
    expect(result.clusterIds).not.toContain(stale.clusterId);
    expect((await statusOf(stale.clusterId)).agent_status).toBe('connected');
  });

  it('logs the count and emits proxima_k8s_stale_clusters_marked_total from the Lambda handler', async () => {
    // Prepare
    setDb(database.as('sweeps').db, 'sweeps');
    await markStaleClusters(database.db, { staleMinutes: 15 });
    const stale = await syncedCluster(
      database.db,
      tenant,
      new Date(Date.now() - 90 * MINUTE),
    );
    // Metrics the direct calls above stored are not this run's.
    metrics.clearMetrics();
    const out = captureStdout();

    // Act
    let result: Awaited<ReturnType<typeof handler>>;
    try {
      result = await handler({}, lambdaContext('stale-clusters'));
    } finally {
      out.restore();
    }

    // Assess
    expect(result.clusterIds).toEqual([stale.clusterId]);
    // The spec's signal, word for word: an INFO line with the count.
    const line = out
      .json()
      .find((l) => l.message === 'marked stale clusters disconnected');
    expect(line).toMatchObject({ level: 'INFO', count: 1 });
    expect(out.metric(MetricName.staleClustersMarked)).toEqual([1]);
  });
});
