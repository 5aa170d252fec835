import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Scope } from '../../../shared/auth/access.ts';
import { historyEventsReader } from '../../../shared/changes/timeline-events.ts';
import {
  DEPLOY_NOTE,
  EVENTS_UNAVAILABLE_NOTE,
  eventsWindowNote,
  readWhatChanged,
  SHARED_ENVIRONMENT_NOTE,
  SHARED_ENVIRONMENT_UNKNOWN_NOTE,
  SOURCES,
  type TimelineCluster,
  type TimelineEventsReader,
  type TimelineSource,
  type WhatChangedQuery,
  whatChangedQuery,
} from '../../../shared/changes/what-changed.ts';
import {
  type Db,
  type Queryable,
  query,
  queryOne,
} from '../../../shared/db/pool.ts';
import {
  ensureEventHistoryPartitions,
  insertEventHistory,
} from '../../../shared/events/history.ts';
import { timelineParameters } from '../../../shared/events/params.ts';
import {
  readTimeline,
  timelineQuery,
} from '../../../shared/events/timeline.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertHost,
  insertNamespace,
} from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const NOW = new Date('2026-10-01T12:00:00Z');
const ago = (minutes: number) => new Date(NOW.getTime() - minutes * 60_000);
/** A client id no row of these tests belongs to. */
const OTHER_CLIENT = '00000000-0000-4000-8000-00000000beef';

const noEvents: TimelineEventsReader = async () => ({
  events: [],
  truncated: false,
  notes: [],
});

interface World {
  clientId: string;
  prod: string;
  staging: string;
  cluster: TimelineCluster;
  /** A second cluster in prod. */
  sibling: TimelineCluster;
  stagingCluster: TimelineCluster;
}

async function insertChange(
  db: Db,
  values: {
    clientId: string;
    environmentId: string | null;
    source: string;
    eventType: string;
    at: Date;
    summary: string;
    details: Record<string, unknown>;
    severity?: string;
    hostId?: string | null;
  },
): Promise<string> {
  const row = await queryOne<{ id: string }>(
    db,
    `insert into change_events (source, event_type, client_id, environment_id,
       host_id, scanned_at, severity, summary, details)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9) returning id`,
    [
      values.source,
      values.eventType,
      values.clientId,
      values.environmentId,
      values.hostId ?? null,
      values.at,
      values.severity ?? 'info',
      values.summary,
      values.details,
    ],
  );
  return row.id;
}

describe('the what-changed timeline', () => {
  let database: TestDatabase;
  let db: Db;
  let w: World;
  let sourceId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const clientId = await insertClient(db, 'acme-timeline');
    const prod = await insertEnvironment(db, clientId, 'production');
    const staging = await insertEnvironment(db, clientId, 'staging');
    const cluster = await insertCluster(db, {
      clientId,
      environmentId: prod,
      name: 'prod-a',
      api_server_url: 'https://10.0.0.1:6443',
    });
    const sibling = await insertCluster(db, {
      clientId,
      environmentId: prod,
      name: 'prod-b',
      api_server_url: 'https://10.0.0.2:6443',
    });
    const stagingCluster = await insertCluster(db, {
      clientId,
      environmentId: staging,
      name: 'staging-a',
    });
    w = {
      clientId,
      prod,
      staging,
      cluster: { id: cluster, clientId, environmentId: prod },
      sibling: { id: sibling, clientId, environmentId: prod },
      stagingCluster: { id: stagingCluster, clientId, environmentId: staging },
    };
    const source = await queryOne<{ id: string }>(
      db,
      `insert into webhook_sources (client_id, environment_id, kind, secret_sha256)
       values ($1, $2, 'alertmanager', sha256('x')) returning id`,
      [clientId, prod],
    );
    sourceId = source.id;
  });
  afterAll(() => database.drop());

  const everyone: Scope = { clientIds: [], environments: [] };
  /** EVENT_HISTORY_DAYS as these tests configure it. */
  const HISTORY_DAYS = 14;
  function read(
    cluster: TimelineCluster,
    q: Partial<WhatChangedQuery> = {},
    options: {
      readable?: TimelineSource[];
      events?: TimelineEventsReader;
      db?: Queryable;
      /** The caller's scope for every permission (the second wall). */
      scope?: Scope;
    } = {},
  ) {
    return readWhatChanged(options.db ?? db, {
      cluster,
      readable: new Set(options.readable ?? SOURCES),
      scopeFor: () =>
        options.scope ?? {
          ...everyone,
          clientIds: [w.clientId],
        },
      query: {
        kinds: ['Deployment', 'StatefulSet', 'DaemonSet', 'Rollout'],
        from: ago(7 * 24 * 60),
        to: NOW,
        ...q,
      },
      events: options.events ?? noEvents,
      historyDays: HISTORY_DAYS,
      now: NOW,
    });
  }

  async function change(
    cluster: TimelineCluster,
    minutesAgo: number,
    details: Record<string, unknown>,
  ) {
    return insertChange(db, {
      clientId: cluster.clientId,
      environmentId: cluster.environmentId,
      source: 'k8s-config',
      eventType: 'workload_changed',
      at: ago(minutesAgo),
      summary: `${details.kind} ${details.namespace}/${details.name}: image api 1 → 2`,
      details: {
        cluster_id: cluster.id,
        changes: [
          { field: 'containers.api.image', before: 'api:1', after: 'api:2' },
        ],
        truncated: false,
        ...details,
      },
    });
  }

  async function deploy(
    environmentId: string | null,
    minutesAgo: number,
    app: string,
    namespace: string,
  ) {
    return insertChange(db, {
      clientId: w.clientId,
      environmentId,
      source: 'deployment',
      eventType: 'sync',
      at: ago(minutesAgo),
      summary: `ArgoCD sync: ${app} (Synced)`,
      details: {
        provider: 'argocd',
        app_name: app,
        namespace,
        revision: '4f1c2d9e8b7a',
        actor: 'alice@example.com',
      },
    });
  }

  async function alertGroup(
    minutesAgo: number,
    groupKey: string,
    alertLabels: Record<string, string>[],
    environmentId: string | null = w.prod,
    hostId: string | null = null,
  ) {
    const row = await queryOne<{ id: string }>(
      db,
      `insert into alert_groups (source_id, client_id, environment_id, host_id,
         group_key, status, severity, title, detail, labels, alert_labels,
         first_fired_at, last_notified_at)
       values ($1, $2, $3, $4, $5, 'firing', 'P2', 'KubePodCrashLooping',
         'api is crash-looping', '{}', $6, $7, $7) returning id`,
      [
        sourceId,
        w.clientId,
        environmentId,
        hostId,
        groupKey,
        JSON.stringify(alertLabels),
        ago(minutesAgo),
      ],
    );
    return row.id;
  }

  async function application(
    reporting: TimelineCluster,
    name: string,
    mappedTo: string | null,
    destinationNamespace: string,
    resources: { kind: string; namespace: string; name: string }[] = [],
  ) {
    const app = await queryOne<{ id: string }>(
      db,
      `insert into argocd_applications (cluster_id, client_id, namespace, name,
         destination_namespace, mapped_cluster_id, content_hash)
       values ($1, $2, 'argocd', $3, $4, $5, 'h') returning id`,
      [reporting.id, reporting.clientId, name, destinationNamespace, mappedTo],
    );
    for (const r of resources) {
      await query(
        db,
        `insert into argocd_application_resources (application_id, api_group, kind, namespace, name)
         values ($1, 'apps', $2, $3, $4)`,
        [app.id, r.kind, r.namespace, r.name],
      );
    }
  }

  it('reads recorded changes of this cluster only, by namespace and workload, never a NetworkPolicy of the same name', async () => {
    // Prepare
    const mine = await change(w.cluster, 60, {
      kind: 'Deployment',
      namespace: 'shop',
      name: 'api',
    });
    await change(w.cluster, 50, {
      kind: 'NetworkPolicy',
      namespace: 'shop',
      name: 'api',
    });
    await change(w.sibling, 40, {
      kind: 'Deployment',
      namespace: 'shop',
      name: 'api',
    });

    // Act
    const view = await read(
      w.cluster,
      {
        namespace: 'shop',
        workload: 'api',
      },
      { readable: ['changes'] },
    );

    // Assess
    expect(view.items).toEqual([
      {
        id: `change:${mine}`,
        time: ago(60).toISOString(),
        kind: 'change',
        title: 'Deployment shop/api: image api 1 → 2',
        detail: 'Deployment shop/api',
        link: `/changes/${mine}`,
        severity: 'info',
        type: 'workload_changed',
        namespace: 'shop',
        object_kind: 'Deployment',
        object_name: 'api',
        changes: [
          { field: 'containers.api.image', before: 'api:1', after: 'api:2' },
        ],
      },
    ]);
    expect(view.sources).toEqual({
      changes: 'ok',
      deploys: 'forbidden',
      events: 'forbidden',
      alerts: 'forbidden',
    });
    expect(view.notes).toEqual(
      expect.arrayContaining([
        'Deploys are not shown: they need changes:read.',
        'Kubernetes events are not shown: they need assets:read.',
        'Alerts are not shown: they need alerts:read.',
      ]),
    );
  });

  it('attributes deploys by Application first, falls back to the namespace, and marks client-wide rows', async () => {
    // Prepare: cart maps here (namespace cart), billing maps to the sibling,
    // legacy is unknown to every agent.
    await application(w.cluster, 'cart', w.cluster.id, 'cart', [
      { kind: 'Deployment', namespace: 'cart', name: 'cart-api' },
    ]);
    await application(w.cluster, 'billing', w.sibling.id, 'cart');
    // A client-wide deploy is listed where its namespace exists.
    await insertNamespace(db, w.cluster.id, 'cart');
    const attributed = await deploy(null, 30, 'cart', 'cart');
    await deploy(w.prod, 29, 'billing', 'cart');
    const fallback = await deploy(w.prod, 28, 'legacy', 'cart');
    const clientWide = await deploy(null, 27, 'legacy', 'cart');
    await deploy(w.staging, 26, 'legacy', 'cart');
    await deploy(w.prod, 25, 'legacy', 'other');

    // Act
    const namespaceView = await read(
      w.cluster,
      { namespace: 'cart' },
      {
        readable: ['deploys'],
      },
    );
    const workloadView = await read(
      w.cluster,
      { namespace: 'cart', workload: 'cart-api', kinds: ['Deployment'] },
      { readable: ['deploys'] },
    );

    // Assess
    expect(namespaceView.items.map((i) => [i.id, i.scope])).toEqual([
      [`deploy:${clientWide}`, 'client'],
      [`deploy:${fallback}`, undefined],
      [`deploy:${attributed}`, undefined],
    ]);
    expect(namespaceView.items[2]).toEqual({
      id: `deploy:${attributed}`,
      time: ago(30).toISOString(),
      kind: 'deploy',
      title: 'ArgoCD sync: cart (Synced)',
      detail: 'app cart · namespace cart · revision 4f1c2d',
      link: `/changes/${attributed}`,
      severity: 'info',
      type: 'sync',
      namespace: 'cart',
      actor: 'alice@example.com',
    });
    expect(namespaceView.notes).toEqual(
      expect.arrayContaining([
        DEPLOY_NOTE,
        '1 deploy comes from a client-wide source (no environment): it may belong to a cluster of another environment with the same namespace.',
        SHARED_ENVIRONMENT_NOTE,
      ]),
    );
    // The workload view: cart by its resource row, legacy by namespace.
    expect(workloadView.items.map((i) => i.id)).toEqual([
      `deploy:${clientWide}`,
      `deploy:${fallback}`,
      `deploy:${attributed}`,
    ]);
  });

  it('keeps a deploy its Application attributes to the view, whatever namespace the notification names', async () => {
    // Prepare: platform deploys into its own namespace and owns a workload
    // in payments; a legacy deploy into platform is unknown to every agent.
    await application(w.cluster, 'platform', w.cluster.id, 'platform', [
      { kind: 'Deployment', namespace: 'payments', name: 'pay-api' },
    ]);
    const owned = await deploy(w.prod, 20, 'platform', 'platform');
    await deploy(w.prod, 19, 'legacy', 'platform');

    // Act
    const ids = async (q: Partial<WhatChangedQuery>) =>
      (await read(w.cluster, q, { readable: ['deploys'] })).items.map(
        (i) => i.id,
      );

    // Assess: by its Application in payments (namespace and workload), by
    // its destination in platform, nowhere else.
    expect(await ids({ namespace: 'payments' })).toEqual([`deploy:${owned}`]);
    expect(
      await ids({
        namespace: 'payments',
        workload: 'pay-api',
        kinds: ['Deployment'],
      }),
    ).toEqual([`deploy:${owned}`]);
    expect(
      await ids({
        namespace: 'payments',
        workload: 'pay-web',
        kinds: ['Deployment'],
      }),
    ).toEqual([]);
    expect(await ids({ namespace: 'platform' })).toContain(`deploy:${owned}`);
  });

  it('matches alerts by namespace label and, for a workload, its label or a pod of the right shape', async () => {
    // Prepare
    const byPod = await alertGroup(20, 'g1', [
      {
        alertname: 'KubePodCrashLooping',
        namespace: 'web',
        pod: 'api-7d9f8c5b4-x2x9k',
      },
    ]);
    await alertGroup(19, 'g2', [
      {
        alertname: 'KubePodCrashLooping',
        namespace: 'web',
        pod: 'api-gateway-7d9f8c5b4-x2x9k',
      },
    ]);
    const byLabel = await alertGroup(18, 'g3', [
      {
        alertname: 'KubeDeploymentReplicasMismatch',
        namespace: 'web',
        deployment: 'api',
      },
    ]);
    await alertGroup(17, 'g4', [
      { alertname: 'NodeDown', instance: 'n1:9100' },
    ]);
    await alertGroup(
      16,
      'g5',
      [{ alertname: 'X', namespace: 'web', pod: 'api-0' }],
      w.staging,
    );
    const host = await insertHost(db, {
      clientId: w.clientId,
      environmentId: w.prod,
      hostname: 'vm-1',
    });
    const viaHost = await alertGroup(
      15,
      'g6',
      [{ namespace: 'web', pod: 'db-0' }],
      null,
      host,
    );
    await alertGroup(14, 'g7', [{ namespace: 'web', pod: 'db-0' }], null, null);

    // Act
    const workload = await read(
      w.cluster,
      { namespace: 'web', workload: 'api', kinds: ['Deployment'] },
      { readable: ['alerts'] },
    );
    const namespace = await read(
      w.cluster,
      { namespace: 'web' },
      {
        readable: ['alerts'],
      },
    );

    // Assess
    expect(workload.items.map((i) => i.id)).toEqual([
      `alert:${byLabel}`,
      `alert:${byPod}`,
    ]);
    expect(workload.items[1]).toEqual({
      id: `alert:${byPod}`,
      time: ago(20).toISOString(),
      kind: 'alert',
      title: 'KubePodCrashLooping',
      detail: 'api is crash-looping',
      link: `/alerts/${byPod}`,
      severity: 'P2',
      type: 'firing',
      namespace: 'web',
    });
    expect(namespace.items.map((i) => i.id)).toEqual([
      `alert:${viaHost}`,
      `alert:${byLabel}`,
      expect.stringMatching(/^alert:/),
      `alert:${byPod}`,
    ]);
    expect(namespace.notes).toEqual(
      expect.arrayContaining([SHARED_ENVIRONMENT_NOTE]),
    );
  });

  it('matches a group by any of its alerts, the namespace shown being the matching one', async () => {
    // Prepare: the ledger namespace is on the group's second alert only.
    const group = await alertGroup(12, 'g-ledger', [
      { alertname: 'X', namespace: 'books' },
      { alertname: 'X', namespace: 'ledger', pod: 'post-0' },
    ]);

    // Act
    const view = async (q: Partial<WhatChangedQuery>) =>
      (await read(w.cluster, q, { readable: ['alerts'] })).items
        .filter((i) => i.id === `alert:${group}`)
        .map((i) => i.namespace);

    // Assess
    expect(await view({ namespace: 'ledger' })).toEqual(['ledger']);
    expect(await view({ namespace: 'books' })).toEqual(['books']);
    expect(await view({ namespace: 'post' })).toEqual([]);
    expect(await view({})).toEqual(['books']);
  });

  it('reads nothing from a source whose scope leaves the cluster out (the second wall), client-wide rows and events included', async () => {
    // Prepare: one row of each source, pinned and client-wide, all of
    // which the cluster's own scope shows (the client-wide deploy for the
    // namespace the cluster has).
    await insertNamespace(db, w.cluster.id, 'wall');
    const pinned = await deploy(w.prod, 12, 'wall-app', 'wall');
    const clientWide = await deploy(null, 11, 'wall-app', 'wall');
    const recorded = await change(w.cluster, 10, {
      kind: 'Deployment',
      namespace: 'wall',
      name: 'wall',
    });
    const alert = await alertGroup(9, 'wall', [
      { alertname: 'KubePodCrashLooping', namespace: 'wall' },
    ]);
    await ensureEventHistoryPartitions(db, 20, NOW);
    await insertEventHistory(
      db,
      w.cluster.id,
      JSON.stringify([
        {
          seen_at: ago(8).toISOString(),
          namespace: 'wall',
          involved_kind: 'Pod',
          involved_name: 'wall-7d9f8c5b4-x2x9k',
          type: 'Warning',
          reason: 'BackOff',
          count: 1,
          message: 'Back-off restarting failed container',
        },
      ]),
    );
    const events = historyEventsReader(db, {
      agentVersion: 'v0.9.0',
      historyDays: HISTORY_DAYS,
      now: NOW,
    });
    const ids = [
      `deploy:${pinned}`,
      `deploy:${clientWide}`,
      `change:${recorded}`,
      `alert:${alert}`,
    ];
    const inScope = await read(w.cluster, {}, { events });

    // Act: the same read with a scope of another client only.
    const outside = await read(
      w.cluster,
      {},
      {
        events,
        scope: { ...everyone, clientIds: [OTHER_CLIENT] },
      },
    );

    // Assess
    expect(inScope.items.map((i) => i.id)).toEqual(expect.arrayContaining(ids));
    expect(
      inScope.items.filter(
        (i) => i.kind === 'event' && i.object_name === 'wall-7d9f8c5b4-x2x9k',
      ),
    ).toHaveLength(1);
    expect(outside.items).toEqual([]);
    expect(outside.truncated).toEqual({
      changes: false,
      deploys: false,
      events: false,
      alerts: false,
    });
  });

  it('gives the shared-environment note only when the environment has another cluster', async () => {
    // Act
    const view = await read(w.stagingCluster, {}, { readable: ['alerts'] });

    // Assess
    expect(view.notes).not.toContain(SHARED_ENVIRONMENT_NOTE);
  });

  it('hedges the shared-environment note when the environment cannot be checked', async () => {
    // Prepare: the same server, but the environment's cluster count hits a
    // relation that is not there, so PostgreSQL itself refuses it.
    const countFails: Queryable = {
      query: <R extends pg.QueryResultRow>(
        text: string,
        values?: readonly unknown[],
      ) =>
        db.query<R>(
          text.replace(
            'from clusters where environment_id',
            'from clusters_gone where environment_id',
          ),
          values as unknown[],
        ),
    };

    // Act
    const view = await read(
      w.cluster,
      {},
      { readable: ['alerts'], db: countFails },
    );

    // Assess
    expect(view.notes).toContain(SHARED_ENVIRONMENT_UNKNOWN_NOTE);
    expect(view.notes).not.toContain(SHARED_ENVIRONMENT_NOTE);
    expect(view.sources.alerts).toBe('ok');
  });

  it('reads the stored sources and the environment count in one statement', async () => {
    // Prepare: the same server, counting the statements the read sends.
    const statements: string[] = [];
    const counting: Queryable = {
      query: <R extends pg.QueryResultRow>(
        text: string,
        values?: readonly unknown[],
      ) => {
        statements.push(text);
        return db.query<R>(text, values as unknown[]);
      },
    };

    // Act
    const view = await read(w.cluster, {}, { db: counting });

    // Assess
    expect(statements).toHaveLength(1);
    expect(view.items.map((i) => i.kind)).toEqual(
      expect.arrayContaining(['change', 'deploy', 'alert']),
    );
    expect(view.notes).toContain(SHARED_ENVIRONMENT_NOTE);
  });

  it('still answers when the event read fails, with events unavailable', async () => {
    // Act
    const view = await read(
      w.cluster,
      {},
      {
        events: async () => {
          throw new Error('store down');
        },
      },
    );

    // Assess
    expect(view.sources.events).toBe('unavailable');
    expect(view.sources.changes).toBe('ok');
    expect(view.notes).toContain(EVENTS_UNAVAILABLE_NOTE);
    expect(view.items.length).toBeGreaterThan(0);
  });

  it("reads events from the 14-day history: the reasons set, the workload by name shape before the cap, the timeline's ids, a long window cut to 14 days", async () => {
    // Prepare: sightings as the sync writes them, one of a look-alike
    // workload (api-gateway) and one with a reason outside the set.
    const sighting = (
      minutesAgo: number,
      name: string,
      reason: string,
      count: number,
    ) => ({
      seen_at: ago(minutesAgo).toISOString(),
      namespace: 'shop',
      involved_kind: 'Pod',
      involved_name: name,
      type: 'Warning',
      reason,
      count,
      message: 'Back-off restarting failed container password=hunter2x',
    });
    await ensureEventHistoryPartitions(db, 20, NOW);
    await insertEventHistory(
      db,
      w.cluster.id,
      JSON.stringify([
        sighting(5, 'api-7d9f8c5b4-x2x9k', 'BackOff', 4),
        sighting(6, 'api-gateway-7d9f8c5b4-x2x9k', 'BackOff', 1),
        sighting(7, 'api-7d9f8c5b4-x2x9k', 'Pulled', 1),
        sighting(15 * 24 * 60, 'api-7d9f8c5b4-x2x9k', 'BackOff', 2),
      ]),
    );
    const events = historyEventsReader(db, {
      agentVersion: 'v0.9.0',
      historyDays: 14,
      now: NOW,
    });
    const q = whatChangedQuery(
      {
        namespace: 'shop',
        workload: 'api',
        kind: 'Deployment',
        from: ago(20 * 24 * 60),
        to: NOW,
      },
      NOW,
    );

    // Act
    const first = await read(w.cluster, q, { readable: ['events'], events });
    const second = await read(w.cluster, q, { readable: ['events'], events });
    const timeline = await readTimeline(
      db,
      timelineQuery(
        timelineParameters.parse({
          namespace: 'shop',
          workload: 'api',
          workload_kind: 'Deployment',
          reason: 'BackOff',
        }),
        NOW,
      ),
      {
        clusterId: w.cluster.id,
        agentVersion: 'v0.9.0',
        historyDays: 14,
        now: NOW,
      },
    );

    // Assess
    expect(first.items).toEqual([
      {
        id: expect.stringMatching(/^event:[0-9a-f]{16}$/),
        time: ago(5).toISOString(),
        kind: 'event',
        title: 'BackOff · Pod api-7d9f8c5b4-x2x9k (×4)',
        detail: 'Back-off restarting failed container password=[REDACTED]',
        type: 'Warning',
        reason: 'BackOff',
        namespace: 'shop',
        object_kind: 'Pod',
        object_name: 'api-7d9f8c5b4-x2x9k',
      },
    ]);
    expect(second.items).toEqual(first.items);
    expect(timeline.events.map((e) => e.id)).toEqual([first.items[0]?.id]);
    expect(first.notes).toContain(eventsWindowNote(HISTORY_DAYS));
    expect(first.sources.events).toBe('ok');
  });

  it("keeps the newest deploys and alert groups of the environment's and the client-wide ones together, at the same instant by id", async () => {
    // Prepare: a client of its own; 110 deploys and 110 alert groups, in
    // pairs at the same instant, one of each pair pinned to the
    // environment and one client-wide (no environment; an alert group's
    // from a host of it), so the cap's 100 interleave the two and ties are
    // broken by id across them.
    const clientId = await insertClient(db, 'acme-interleaved');
    const env = await insertEnvironment(db, clientId, 'production');
    const other = await insertEnvironment(db, clientId, 'staging');
    const clusterId = await insertCluster(db, {
      clientId,
      environmentId: env,
      name: 'interleaved',
    });
    await insertNamespace(db, clusterId, 'shop');
    const host = await insertHost(db, {
      clientId,
      environmentId: env,
      hostname: 'vm-interleaved',
    });
    const source = await queryOne<{ id: string }>(
      db,
      `insert into webhook_sources (client_id, environment_id, kind, secret_sha256)
       values ($1, null, 'alertmanager', sha256('interleaved')) returning id`,
      [clientId],
    );
    await query(
      db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, summary, details)
       select 'deployment', 'sync', $1::uuid,
              case when i % 2 = 0 then $2::uuid end, $3::timestamptz - make_interval(mins => i / 2),
              'deploy ' || i, jsonb_build_object('provider', 'argocd',
                'app_name', 'app-' || i, 'namespace', 'shop')
       from generate_series(1, 110) i
       union all
       -- Another environment's deploys, at the newest instants: never shown.
       select 'deployment', 'sync', $1::uuid, $4::uuid, $3::timestamptz, 'other ' || i,
              jsonb_build_object('provider', 'argocd', 'app_name', 'other-' || i,
                'namespace', 'shop')
       from generate_series(1, 5) i`,
      [clientId, env, NOW, other],
    );
    await query(
      db,
      `insert into alert_groups (source_id, client_id, environment_id, host_id,
         group_key, status, title, labels, alert_labels, first_fired_at,
         last_notified_at)
       select $1, $2, case when i % 2 = 0 then $3::uuid end,
              case when i % 2 = 1 then $4::uuid end, 'g-' || i, 'firing',
              'alert ' || i, '{}', '[{"namespace": "shop"}]',
              $5::timestamptz - make_interval(mins => i / 2),
              $5::timestamptz - make_interval(mins => i / 2)
       from generate_series(1, 110) i`,
      [source.id, clientId, env, host, NOW],
    );
    const expected = async (sql: string, more: unknown[] = []) =>
      (await query<{ id: string }>(db, sql, [clientId, env, ...more])).map(
        (r) => r.id,
      );
    const deploys = await expected(
      `select id from change_events
       where client_id = $1 and source = 'deployment'
         and (environment_id = $2 or environment_id is null)
       order by scanned_at desc, id desc limit 100`,
    );
    const alerts = await expected(
      `select id from alert_groups
       where client_id = $1 and (environment_id = $2 or environment_id is null)
       order by first_fired_at desc, id desc limit 100`,
    );

    // Act
    const view = await readWhatChanged(db, {
      cluster: { id: clusterId, clientId, environmentId: env },
      readable: new Set<TimelineSource>(['deploys', 'alerts']),
      scopeFor: () => ({ clientIds: [clientId], environments: [] }),
      query: {
        kinds: ['Deployment', 'StatefulSet', 'DaemonSet', 'Rollout'],
        from: ago(7 * 24 * 60),
        to: NOW,
      },
      events: noEvents,
      historyDays: HISTORY_DAYS,
      now: NOW,
    });

    // Assess: the kept rows are the newest 100 by (time, id), as one
    // statement over both would keep them (the timeline then lists an
    // instant's items by id ascending: compareItems).
    const ids = (kind: string) =>
      view.items
        .filter((i) => i.kind === kind)
        .map((i) => i.id)
        .sort();
    expect(ids('deploy')).toEqual(deploys.map((id) => `deploy:${id}`).sort());
    expect(ids('alert')).toEqual(alerts.map((id) => `alert:${id}`).sort());
    expect(view.truncated).toMatchObject({ deploys: true, alerts: true });
    const clientWide = await expected(
      `select id from change_events
       where client_id = $1 and source = 'deployment' and environment_id is null
         and $2::uuid is not null and id = any($3::uuid[])`,
      [deploys],
    );
    expect(
      view.items
        .filter((i) => i.kind === 'deploy' && i.scope === 'client')
        .map((i) => i.id)
        .sort(),
    ).toEqual(clientWide.map((id) => `deploy:${id}`).sort());
    expect(clientWide.length).toBeGreaterThanOrEqual(50);
  });

  it('writes a time with microseconds as Date writes it, milliseconds truncated', async () => {
    // Prepare
    const id = await change(w.cluster, 5, {
      kind: 'Deployment',
      namespace: 'clock',
      name: 'api',
    });
    await query(db, 'update change_events set scanned_at = $2 where id = $1', [
      id,
      '2026-10-01T11:55:00.123999Z',
    ]);

    // Act
    const view = await read(w.cluster, { namespace: 'clock' });

    // Assess
    expect(view.items.find((i) => i.id === `change:${id}`)?.time).toBe(
      '2026-10-01T11:55:00.123Z',
    );
  });

  it('refuses the parameter combinations the spec refuses, naming the parameter', () => {
    // Assess
    const refused = (params: Parameters<typeof whatChangedQuery>[0]) => {
      try {
        whatChangedQuery(params, NOW);
      } catch (error) {
        return (error as { details?: { param?: string } }).details?.param;
      }
      return 'accepted';
    };
    expect(refused({ workload: 'api' })).toBe('workload');
    expect(refused({ namespace: 'shop', kind: 'Deployment' })).toBe('kind');
    expect(refused({ from: NOW, to: ago(1) })).toBe('from');
    expect(refused({ from: ago(31 * 24 * 60), to: NOW })).toBe('from');
    expect(refused({ from: ago(30 * 24 * 60), to: NOW })).toBe('accepted');
  });
});
