import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, query } from '../../../shared/db/pool.ts';
import {
  EventsBackendTimeoutError,
  EventsBackendUnavailableError,
} from '../../../shared/errors.ts';
import { timelineParameters } from '../../../shared/events/params.ts';
import {
  readTimeline,
  type TimelineContext,
  timelineQuery,
} from '../../../shared/events/timeline.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
} from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const NOW = new Date();
const MIN = 60_000;

let database: TestDatabase;
let clusterId: string;
let otherClusterId: string;

interface Sighting {
  at: Date | string;
  kind: string;
  name: string;
  reason?: string;
  type?: string;
  namespace?: string;
  count?: number;
  message?: string;
}

async function insertHistory(cluster: string, rows: Sighting[]) {
  await query(
    database.db,
    `insert into k8s_event_history (cluster_id, seen_at, namespace,
       involved_kind, involved_name, type, reason, count, message, content_id)
     select $1, e.at, e.namespace, e.kind, e.name, e.type, e.reason, e.count,
       e.message, k8s_event_content_id(e.at, e.namespace, e.kind, e.name,
         e.type, e.reason, e.count, e.message)
     from jsonb_to_recordset($2::jsonb) as e(at timestamptz, namespace text,
       kind text, name text, type text, reason text, count int, message text)`,
    [
      cluster,
      JSON.stringify(
        rows.map((r) => ({
          at: r.at instanceof Date ? r.at.toISOString() : r.at,
          namespace: r.namespace ?? 'shop',
          kind: r.kind,
          name: r.name,
          type: r.type ?? 'Normal',
          reason: r.reason ?? 'Created',
          count: r.count ?? 1,
          message: r.message ?? `event of ${r.name}`,
        })),
      ),
    ],
  );
}

function ago(minutes: number): Date {
  return new Date(NOW.getTime() - minutes * MIN);
}

const ctx = (overrides: Partial<TimelineContext> = {}): TimelineContext => ({
  clusterId,
  agentVersion: 'v0.8.1',
  historyDays: 14,
  now: NOW,
  ...overrides,
});

async function read(
  params: Record<string, string>,
  context: Partial<TimelineContext> = {},
) {
  return readTimeline(
    database.db,
    timelineQuery(timelineParameters.parse(params), NOW),
    ctx(context),
  );
}

beforeAll(async () => {
  database = await createTestDatabase();
  const clientId = await insertClient(database.db, 'timeline-client');
  const environmentId = await insertEnvironment(database.db, clientId, 'prod');
  clusterId = await insertCluster(database.db, {
    clientId,
    environmentId,
    name: 'timeline',
  });
  otherClusterId = await insertCluster(database.db, {
    clientId,
    environmentId,
    name: 'other',
  });
  // The window-edge rows are in a day the migration made no partition for.
  await query(
    database.db,
    `select k8s_event_history_ensure_partitions('2025-12-31', '2026-01-01')`,
  );
  await insertHistory(clusterId, [
    {
      at: ago(1),
      kind: 'Deployment',
      name: 'api',
      reason: 'ScalingReplicaSet',
    },
    {
      at: ago(2),
      kind: 'ReplicaSet',
      name: 'api-6f7d8b9c4',
      reason: 'SuccessfulCreate',
    },
    {
      at: ago(3),
      kind: 'Pod',
      name: 'api-6f7d8b9c4-x2k4p',
      reason: 'BackOff',
      type: 'Warning',
      count: 4,
    },
    {
      at: ago(4),
      kind: 'Pod',
      name: 'api-gateway-6f7d8-x2k4p',
      reason: 'BackOff',
      type: 'Warning',
    },
    { at: ago(5), kind: 'Pod', name: 'api-v2-x7k2p', reason: 'Pulled' },
    { at: ago(6), kind: 'Pod', name: 'api-db-x7k2p', reason: 'Pulled' },
    {
      at: ago(7),
      kind: 'HorizontalPodAutoscaler',
      name: 'api',
      reason: 'SuccessfulRescale',
    },
    {
      at: ago(8),
      kind: 'Pod',
      name: 'api-6f7d8b9c4-x2k4p',
      reason: 'Pulled',
      namespace: 'other',
    },
    {
      at: ago(9),
      kind: 'Node',
      name: 'node-a',
      reason: 'NodeReady',
      namespace: 'default',
    },
    {
      at: ago(10),
      kind: 'Pod',
      name: 'web-1',
      reason: 'Unhealthy',
      type: 'Warning',
      message: 'Liveness probe failed: --password hunter2',
    },
    { at: ago(60 * 24 + 5), kind: 'Pod', name: 'old-1', reason: 'Killing' },
    {
      at: '2026-01-01T00:00:00.123456Z',
      kind: 'Pod',
      name: 'edge',
      reason: 'Edge',
    },
  ]);
  await insertHistory(otherClusterId, [
    {
      at: ago(1),
      kind: 'Pod',
      name: 'api-6f7d8b9c4-x2k4p',
      reason: 'OtherCluster',
    },
  ]);
});

afterAll(async () => {
  await database.drop();
});

describe('readTimeline', () => {
  it("reads the cluster's past 24 hours newest first, with what a row carries", async () => {
    // Act
    const timeline = await read({});

    // Assess
    expect(timeline.events.map((e) => e.reason)).toEqual([
      'ScalingReplicaSet',
      'SuccessfulCreate',
      'BackOff',
      'BackOff',
      'Pulled',
      'Pulled',
      'SuccessfulRescale',
      'Pulled',
      'NodeReady',
      'Unhealthy',
    ]);
    expect(timeline.events[2]).toMatchObject({
      namespace: 'shop',
      involved_kind: 'Pod',
      involved_name: 'api-6f7d8b9c4-x2k4p',
      type: 'Warning',
      reason: 'BackOff',
      count: 4,
      message: 'event of api-6f7d8b9c4-x2k4p',
    });
    expect(timeline.events[2]?.id).toMatch(/^event:[0-9a-f]{16}$/);
    expect(timeline.truncated).toBe(false);
    expect(timeline.notes).toEqual([]);
  });

  it('sanitizes messages on the way out', async () => {
    // Act
    const timeline = await read({ reason: 'Unhealthy' });

    // Assess
    expect(timeline.events[0]?.message).toBe(
      'Liveness probe failed: --password [REDACTED]',
    );
  });

  it.each([
    [{ namespace: 'other' }, ['Pulled']],
    [{ involved_kind: 'Node' }, ['NodeReady']],
    [
      { involved_kind: 'Deployment', involved_name: 'api' },
      ['ScalingReplicaSet'],
    ],
    [{ involved_name: 'api-6f7d8b9c4-x2k4p' }, ['BackOff', 'Pulled']],
    [{ type: 'Warning' }, ['BackOff', 'BackOff', 'Unhealthy']],
    [{ reason: 'Pulled', namespace: 'shop' }, ['Pulled', 'Pulled']],
  ])('filters exactly by %j', async (params, reasons) => {
    // Act
    const timeline = await read(params);

    // Assess
    expect(timeline.events.map((e) => e.reason)).toEqual(reasons);
  });

  it("reads a Deployment's own events, its ReplicaSets' and its pods', with the documented api-db residual", async () => {
    // Act
    const timeline = await read({
      namespace: 'shop',
      workload: 'api',
      workload_kind: 'Deployment',
    });

    // Assess: not api-gateway's pod, not DaemonSet api-v2's, not the HPA,
    // not the other namespace; DaemonSet api-db's pod fits the pod shape.
    expect(timeline.events.map((e) => e.involved_name)).toEqual([
      'api',
      'api-6f7d8b9c4',
      'api-6f7d8b9c4-x2k4p',
      'api-db-x7k2p',
    ]);
  });

  it('returns an event at exactly to, and one at exactly from', async () => {
    // Act
    const timeline = await read({
      from: '2026-01-01T00:00:00.123456Z',
      to: '2026-01-01T00:00:00.123456Z'.replace('.123456Z', '.123456001Z'),
    });
    const atTo = await read({
      from: '2025-12-31T23:00:00Z',
      to: '2026-01-01T00:00:00.123456Z',
    });
    const justBefore = await read({
      from: '2025-12-31T23:00:00Z',
      to: '2026-01-01T00:00:00.123455999Z',
    });
    const justAfter = await read({
      from: '2026-01-01T00:00:00.123456001Z',
      to: '2026-01-01T01:00:00Z',
    });

    // Assess
    expect(timeline.events.map((e) => e.reason)).toEqual(['Edge']);
    expect(atTo.events.map((e) => e.time)).toEqual([
      '2026-01-01T00:00:00.123456Z',
    ]);
    expect(justBefore.events).toEqual([]);
    expect(justAfter.events).toEqual([]);
  });

  it('notes a window that starts before the retention edge', async () => {
    // Act
    const timeline = await read({
      from: ago(60 * 24 * 14 + 60).toISOString(),
      to: ago(60 * 24 * 13).toISOString(),
    });

    // Assess
    expect(timeline.events).toEqual([]);
    expect(timeline.notes).toHaveLength(1);
    expect(timeline.notes[0]).toMatch(/^events are kept for 14 days/);
  });

  it('truncates at limit, newest first, with a note', async () => {
    // Act
    const timeline = await read({ limit: '2' });

    // Assess
    expect(timeline.events.map((e) => e.reason)).toEqual([
      'ScalingReplicaSet',
      'SuccessfulCreate',
    ]);
    expect(timeline.truncated).toBe(true);
    expect(timeline.notes[0]).toMatch(/^more than 2 events match/);
  });

  it('notes an agent older than v0.8.0, or one with no version', async () => {
    // Act
    const old = await read({}, { agentVersion: 'v0.7.12' });
    const none = await read({}, { agentVersion: null });

    // Assess
    expect(old.notes).toHaveLength(1);
    expect(old.notes[0]).toMatch(/older than v0\.8\.0/);
    expect(none.notes).toEqual(old.notes);
  });

  it("never reads another cluster's rows", async () => {
    // Act
    const timeline = await read({ reason: 'OtherCluster' });

    // Assess
    expect(timeline.events).toEqual([]);
  });

  it('answers 502 events_backend_unavailable when the database fails, never an empty list', async () => {
    // Prepare: a pool on a port nothing listens on.
    const broken = createPool({
      connectionString: 'postgres://nobody@127.0.0.1:1/none',
      max: 1,
    });

    // Act
    const error = await readTimeline(
      broken,
      timelineQuery(timelineParameters.parse({}), NOW),
      ctx(),
    ).catch((e: unknown) => e);
    await broken.end();

    // Assess
    expect(error).toBeInstanceOf(EventsBackendUnavailableError);
    expect(error).toMatchObject({
      status: 502,
      code: 'events_backend_unavailable',
    });
  });

  it('answers 504 events_backend_timeout when the read runs past its deadline', async () => {
    // Prepare: the history table locked by another session, so the read waits.
    const holder = await database.db.connect();
    await holder.query('begin');
    await holder.query('lock table k8s_event_history in access exclusive mode');

    // Act
    const error = await readTimeline(
      database.db,
      timelineQuery(timelineParameters.parse({}), NOW),
      ctx(),
      { deadlineMs: 300 },
    ).catch((e: unknown) => e);
    await holder.query('rollback');
    holder.release();

    // Assess
    expect(error).toBeInstanceOf(EventsBackendTimeoutError);
    expect(error).toMatchObject({
      status: 504,
      code: 'events_backend_timeout',
    });
  });
});
