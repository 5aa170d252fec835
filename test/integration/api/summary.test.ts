import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  GiB,
  insertClient,
  insertCluster,
  insertEnvironment,
  insertEvent,
  insertGrant,
  insertNode,
  insertPod,
  insertWorkload,
  MiB,
  secondsAgo,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  type HealthFixture,
  insertHealthFixture,
} from '../../helpers/health-fixture.ts';

/** The hand-computed capacity of test/helpers/health-fixture.ts. */
const EXPECTED_CAPACITY = {
  // n1..n5: 4000 + 4000 + 2000 + 2000 + 8000
  cpu_allocatable_millicores: 20_000,
  // web-1 250 + web-2 250 + worker-1 100 + worker-2 100 + api-1 500 + odd 50
  // + pend-old 0 + unk 10; job-1 (Succeeded) and job-2 (Failed) left out
  cpu_requested_millicores: 1260,
  // 500 + 500 + 1000 (api-1) + 100 (odd)
  cpu_limits_millicores: 2100,
  // reporting nodes n1, n2, n5 (n4's stored 0 is no data): 1500 + 500 + 2000
  cpu_used_millicores: 4000,
  // allocatable of n1, n2, n5: 4000 + 4000 + 8000
  cpu_allocatable_reporting_millicores: 16_000,
  cpu_usage_nodes: 3,
  // 16 + 16 + 8 + 8 + 32 GiB
  mem_allocatable_bytes: 80 * GiB,
  // 256 + 256 + 128 + 128 + 1024 + 64 + 10 MiB
  mem_requested_bytes: 1866 * MiB,
  // 512 + 512 + 2048 + 128 MiB
  mem_limits_bytes: 3200 * MiB,
  // n1 8 GiB + n2 2 GiB (n5 reports no memory)
  mem_used_bytes: 10 * GiB,
  // n1 16 + n2 16 GiB
  mem_allocatable_reporting_bytes: 32 * GiB,
  mem_usage_nodes: 2,
  // 4 × 110 + 250
  pods_allocatable: 690,
  // web-1, web-2, api-1
  pods_running: 3,
  nodes_total: 5,
};

describe('cluster summary', () => {
  let database: TestDatabase;
  let api: TestApi;
  let token: string;
  let alpha: HealthFixture;
  let beta: HealthFixture;
  let wideId: string;
  let tenant: {
    clientId: string;
    environmentId: string;
    otherEnvironmentId: string;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    api = await startTestApi(database);
    const clientId = await insertClient(db, 'acme');
    tenant = {
      clientId,
      environmentId: await insertEnvironment(db, clientId, 'production'),
      otherEnvironmentId: await insertEnvironment(db, clientId, 'staging'),
    };
    alpha = await insertHealthFixture(db, tenant, 'alpha');
    // The same inventory in a second cluster: nothing of it may leak into alpha's.
    beta = await insertHealthFixture(db, tenant, 'beta');
    wideId = await insertWideCluster(database, tenant);
    await insertGrant(db, {
      email: 'reader@example.test',
      role: 'viewer',
      clientId,
    });
    token = await api.token('reader@example.test');
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('digests the cluster exactly as computed by hand', async () => {
    // Act
    const before = Date.now();
    const response = await api.get(
      `/api/v1/clusters/${alpha.clusterId}/summary`,
      token,
    );

    // Assess
    expect(response.status).toBe(200);
    const summary = response.body.data;
    expect(Object.keys(summary)).toEqual([
      'nodes',
      'not_ready_nodes',
      'pods',
      'waiting',
      'pending_long',
      'top_restarters',
      'workloads_not_ready',
      'capacity',
      'warning_events_1h',
      'top_warning_reasons',
      'generated_at',
    ]);
    // ready: n1, n2, n5; with_metrics: n1, n4, n5 (n2's host is in staging)
    expect(summary.nodes).toEqual({
      total: 5,
      ready: 3,
      not_ready: 2,
      with_metrics: 3,
    });
    expect(summary.not_ready_nodes).toEqual(['n3', 'n4']);
    // unknown: odd (no phase) and unk (Unknown)
    expect(summary.pods).toEqual({
      total: 10,
      running: 3,
      pending: 3,
      succeeded: 1,
      failed: 1,
      unknown: 2,
    });
    // containers, not pods: api-1 has two in CrashLoopBackOff; pend-old's
    // init container waits without a reason
    expect(summary.waiting).toEqual([
      { reason: 'CrashLoopBackOff', count: 2 },
      { reason: 'ImagePullBackOff', count: 2 },
      { reason: 'ContainerCreating', count: 1 },
      { reason: 'Unknown', count: 1 },
    ]);
    expect(Object.keys(summary.waiting[0] ?? {})).toEqual(['reason', 'count']);
    // worker-2 has been pending for 2 minutes only
    expect(summary.pending_long.map((p: { name: string }) => p.name)).toEqual([
      'pend-old',
      'worker-1',
    ]);
    const [oldest, younger] = summary.pending_long;
    expect(oldest.namespace).toBe('kube-system');
    const elapsed = Math.ceil((Date.now() - before) / 1000) + 120;
    expect(oldest.age_seconds).toBeGreaterThanOrEqual(3600);
    expect(oldest.age_seconds).toBeLessThan(3600 + elapsed);
    expect(younger.age_seconds).toBeGreaterThanOrEqual(600);
    expect(younger.age_seconds).toBeLessThan(600 + elapsed);
    expect(summary.top_restarters).toEqual([
      {
        namespace: 'shop',
        name: 'api-1',
        workload_kind: 'Deployment',
        workload: 'api',
        restarts: 12,
      },
      {
        namespace: 'shop',
        name: 'web-2',
        workload_kind: 'Deployment',
        workload: 'web',
        restarts: 3,
      },
      {
        namespace: 'shop',
        name: 'job-2',
        workload_kind: 'CronJob',
        workload: 'nightly',
        restarts: 1,
      },
    ]);
    // api short by 2; then shortfall 1 by namespace, kind, name; db's
    // missing ready count reads as 0; worker, scaled-to-zero, no-desired are fine
    expect(summary.workloads_not_ready).toEqual([
      {
        id: alpha.workloads.api,
        kind: 'Deployment',
        namespace: 'shop',
        name: 'api',
        ready: 0,
        desired: 2,
      },
      {
        id: alpha.workloads['node-agent'],
        kind: 'DaemonSet',
        namespace: 'kube-system',
        name: 'node-agent',
        ready: 4,
        desired: 5,
      },
      {
        id: alpha.workloads.web,
        kind: 'Deployment',
        namespace: 'shop',
        name: 'web',
        ready: 2,
        desired: 3,
      },
      {
        id: alpha.workloads.db,
        kind: 'StatefulSet',
        namespace: 'shop',
        name: 'db',
        ready: 0,
        desired: 1,
      },
    ]);
    expect(summary.capacity).toEqual(EXPECTED_CAPACITY);
    // e1, e2 (one object, count 50), e3, e6; e4 is 2 h old, e5 is Normal
    expect(summary.warning_events_1h).toBe(4);
    expect(summary.top_warning_reasons).toEqual([
      { reason: 'BackOff', count: 2 },
      { reason: 'FailedScheduling', count: 1 },
      { reason: 'Unknown', count: 1 },
    ]);
    expect(
      Math.abs(Date.parse(summary.generated_at) - Date.now()),
    ).toBeLessThan(60_000);
  });

  it('gives include=capacity the same figures as the summary, per cluster', async () => {
    // Act
    const list = await api.get(
      `/api/v1/environments/${tenant.environmentId}/clusters?include=capacity&search=a`,
      token,
    );
    const summary = await api.get(
      `/api/v1/clusters/${beta.clusterId}/summary`,
      token,
    );

    // Assess
    const byName = Object.fromEntries(
      list.body.data.map((c: { name: string }) => [c.name, c]),
    );
    expect(byName.alpha.capacity).toEqual(EXPECTED_CAPACITY);
    // pending 3 + failed 1 + unknown 2
    expect(byName.alpha.pods_not_running).toBe(6);
    expect(byName.alpha.warning_events_1h).toBe(4);
    expect(byName.beta.capacity).toEqual(summary.body.data.capacity);
    expect(byName.beta.warning_events_1h).toBe(
      summary.body.data.warning_events_1h,
    );
  });

  it('caps every list and keeps the counts beside them exact', async () => {
    // Act
    const response = await api.get(`/api/v1/clusters/${wideId}/summary`, token);

    // Assess
    const summary = response.body.data;
    expect(summary.nodes).toEqual({
      total: 12,
      ready: 0,
      not_ready: 12,
      with_metrics: 0,
    });
    expect(summary.not_ready_nodes).toEqual(
      Array.from(
        { length: 10 },
        (_, i) => `nr-${String(i + 1).padStart(2, '0')}`,
      ),
    );
    expect(summary.waiting).toHaveLength(10);
    // reason R01 has 12 containers, R02 11, ... R12 1
    expect(summary.waiting[0]).toEqual({ reason: 'R01', count: 12 });
    expect(summary.waiting[9]).toEqual({ reason: 'R10', count: 3 });
    expect(summary.pods.pending).toBe(12);
    expect(summary.pending_long).toHaveLength(10);
    expect(summary.pending_long[0].name).toBe('p-12');
    expect(
      summary.top_restarters.map((p: { restarts: number }) => p.restarts),
    ).toEqual([12, 11, 10, 9, 8]);
    expect(summary.workloads_not_ready).toHaveLength(10);
    expect(summary.workloads_not_ready[0]).toMatchObject({
      name: 'w-12',
      ready: 0,
      desired: 12,
    });
    // 7 reasons with 1..7 events each: 28 objects in the hour
    expect(summary.warning_events_1h).toBe(28);
    expect(summary.top_warning_reasons).toEqual([
      { reason: 'W7', count: 7 },
      { reason: 'W6', count: 6 },
      { reason: 'W5', count: 5 },
      { reason: 'W4', count: 4 },
      { reason: 'W3', count: 3 },
    ]);
  });

  it('answers every list as [] for an empty cluster, usage null', async () => {
    // Prepare
    const emptyId = await insertCluster(database.db, {
      clientId: tenant.clientId,
      environmentId: tenant.environmentId,
      name: 'empty',
    });

    // Act
    const response = await api.get(
      `/api/v1/clusters/${emptyId}/summary`,
      token,
    );

    // Assess
    const summary = response.body.data;
    for (const list of [
      'not_ready_nodes',
      'waiting',
      'pending_long',
      'top_restarters',
      'workloads_not_ready',
      'top_warning_reasons',
    ]) {
      expect(summary[list]).toEqual([]);
    }
    expect(summary.capacity.cpu_used_millicores).toBeNull();
    expect(summary.capacity.mem_used_bytes).toBeNull();
    expect(summary.capacity.cpu_allocatable_millicores).toBe(0);
  });
});

/** 12 of everything the summary caps, with distinct, ordered figures. */
async function insertWideCluster(
  database: TestDatabase,
  tenant: { clientId: string; environmentId: string },
): Promise<string> {
  const { db } = database;
  const id = await insertCluster(db, {
    clientId: tenant.clientId,
    environmentId: tenant.environmentId,
    name: 'wide',
  });
  for (let i = 1; i <= 12; i++) {
    const n = String(i).padStart(2, '0');
    await insertNode(db, id, { name: `nr-${n}`, status: 'NotReady' });
    await insertWorkload(db, id, {
      kind: 'Deployment',
      namespace: 'shop',
      name: `w-${n}`,
      replicas_desired: i,
      replicas_ready: 0,
    });
    // Pod p-i: pending for i hours, restarted i times, 13 - i containers
    // waiting for reason R(i).
    await insertPod(db, id, {
      namespace: 'shop',
      name: `p-${i}`,
      phase: 'Pending',
      pending_since: secondsAgo(i * 3600),
      restart_count: i,
      containers: Array.from({ length: 13 - i }, (_, c) => ({
        name: `c${c}`,
        state: 'waiting' as const,
        waiting_reason: `R${n}`,
      })),
    });
  }
  for (let reason = 1; reason <= 7; reason++) {
    for (let k = 0; k < reason; k++) {
      await insertEvent(db, id, {
        namespace: 'shop',
        name: `w${reason}-${k}`,
        type: 'Warning',
        reason: `W${reason}`,
        last_seen: secondsAgo(60),
      });
    }
  }
  return id;
}
