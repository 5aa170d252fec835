/**
 * The what-changed timeline's per-source caps, through the route (spec
 * "What Changed (timeline)"): each source keeps its newest items up to its
 * cap (changes 200, deploys 100, events 200, alerts 100),
 * truncated.<source> is true when more exist and a note says so; a
 * recorded change whose recorder kept only the first 50 fields carries
 * changes_truncated.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertEventSightings,
  insertGrant,
  insertNamespace,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const CAPS = { changes: 200, deploys: 100, events: 200, alerts: 100 };
const KIND_OF = {
  changes: 'change',
  deploys: 'deploy',
  events: 'event',
  alerts: 'alert',
} as const;
const TRUNCATED_NOTES = {
  changes: 'Only the newest 200 recorded changes of this window are shown.',
  deploys: 'Only the newest 100 deploys of this window are shown.',
  events:
    'Only the newest 200 events of this window are shown; older events may have been left out.',
  alerts: 'Only the newest 100 alert groups of this window are shown.',
};
type Source = keyof typeof CAPS;
const SOURCES = Object.keys(CAPS) as Source[];

interface Item {
  id: string;
  kind: string;
  time: string;
  title: string;
  changes_truncated?: boolean;
}

describe('what changed: per-source caps', () => {
  let database: TestDatabase;
  let api: TestApi;
  let token: string;
  /** A cluster with `cap + extra` items of each source, in its own environment. */
  const clusters: Record<string, string> = {};

  /** `count` of each source on a new cluster, the newest 1 minute ago. */
  async function clusterWith(name: string, count: (s: Source) => number) {
    const db = database.db;
    const clientId = await queryOne<{ id: string }>(
      db,
      `select id from clients where slug = 'acme-caps'`,
    );
    const env = await insertEnvironment(db, clientId.id, name);
    const clusterId = await insertCluster(db, {
      clientId: clientId.id,
      environmentId: env,
      name,
    });
    await insertNamespace(db, clusterId, 'shop');
    // Minute i (1 = newest); the title carries i, so order is checkable.
    await query(
      db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, severity, summary, details)
       select 'k8s-config', 'workload_changed', $1, $2,
              now() - make_interval(mins => i), 'info', 'change ' || i,
              jsonb_build_object('cluster_id', $3::text, 'kind', 'Deployment',
                'namespace', 'shop', 'name', 'api-' || i,
                'changes', '[{"field": "replicas", "before": "1", "after": "2"}]'::jsonb,
                'truncated', i = 1)
       from generate_series(1, $4::int) i`,
      [clientId.id, env, clusterId, count('changes')],
    );
    await query(
      db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, severity, summary, details)
       select 'deployment', 'sync', $1, $2, now() - make_interval(mins => i),
              'info', 'deploy ' || i,
              jsonb_build_object('provider', 'argocd', 'app_name', 'app-' || i,
                'namespace', 'shop')
       from generate_series(1, $3::int) i`,
      [clientId.id, env, count('deploys')],
    );
    const source = await queryOne<{ id: string }>(
      db,
      `insert into webhook_sources (client_id, environment_id, kind, secret_sha256)
       values ($1, $2, 'alertmanager', sha256($3::bytea)) returning id`,
      [clientId.id, env, Buffer.from(name)],
    );
    await query(
      db,
      `insert into alert_groups (source_id, client_id, environment_id, group_key,
         status, severity, title, labels, alert_labels, first_fired_at, last_notified_at)
       select $1, $2, $3, 'group-' || i, 'firing', 'P2', 'alert ' || i, '{}',
              '[{"namespace": "shop", "alertname": "X"}]'::jsonb,
              now() - make_interval(mins => i), now() - make_interval(mins => i)
       from generate_series(1, $4::int) i`,
      [source.id, clientId.id, env, count('alerts')],
    );
    const now = Date.now();
    await insertEventSightings(
      db,
      clusterId,
      Array.from({ length: count('events') }, (_, j) => ({
        seen_at: new Date(now - (j + 1) * 60_000).toISOString(),
        namespace: 'shop',
        involved_kind: 'Pod',
        involved_name: `api-7d9f8c5b4-x${String(j).padStart(4, 'b')}`,
        type: 'Warning',
        reason: 'BackOff',
        count: j + 1,
        message: `event ${j + 1}`,
      })),
    );
    clusters[name] = clusterId;
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database.db);
    const clientId = await insertClient(database.db, 'acme-caps');
    await insertGrant(database.db, {
      email: 'op@example.com',
      role: 'operator',
      clientId,
    });
    token = await api.token('op@example.com');
    await clusterWith('over', (s) => CAPS[s] + 1);
    await clusterWith('at', (s) => CAPS[s]);
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  const read = async (cluster: string) => {
    const answer = await api.get(
      `/api/v1/clusters/${clusters[cluster]}/changes`,
      token,
    );
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.data as {
      items: Item[];
      truncated: Record<Source, boolean>;
      notes: string[];
    };
  };
  const ofSource = (items: Item[], source: Source) =>
    items.filter((item) => item.kind === KIND_OF[source]);

  it('keeps the newest items up to each cap, says truncated and notes it, when one more exists', async () => {
    // Act
    const data = await read('over');

    // Assess
    expect(data.truncated).toEqual({
      changes: true,
      deploys: true,
      events: true,
      alerts: true,
    });
    for (const source of SOURCES) {
      const items = ofSource(data.items, source);
      expect(items, source).toHaveLength(CAPS[source]);
      expect(data.notes, source).toContain(TRUNCATED_NOTES[source]);
    }
    // The one left out is the oldest of each source.
    const titles = data.items.map((item) => item.title);
    expect(titles).toContain('change 1');
    expect(titles).not.toContain('change 201');
    expect(titles).toContain('deploy 1');
    expect(titles).not.toContain('deploy 101');
    expect(titles).toContain('alert 1');
    expect(titles).not.toContain('alert 101');
    const events = ofSource(data.items, 'events');
    expect(events.at(-1)?.title).toMatch(/\(×200\)$/);
  });

  it('is not truncated, and has no note, at exactly the cap', async () => {
    // Act
    const data = await read('at');

    // Assess
    expect(data.truncated).toEqual({
      changes: false,
      deploys: false,
      events: false,
      alerts: false,
    });
    for (const source of SOURCES) {
      expect(ofSource(data.items, source), source).toHaveLength(CAPS[source]);
      expect(data.notes, source).not.toContain(TRUNCATED_NOTES[source]);
    }
  });

  it('marks changes_truncated on a change whose recorder kept only its first fields, and on no other', async () => {
    // Act
    const data = await read('at');

    // Assess
    const changes = ofSource(data.items, 'changes');
    const marked = changes.filter((item) => 'changes_truncated' in item);
    expect(marked.map((item) => [item.title, item.changes_truncated])).toEqual([
      ['change 1', true],
    ]);
  });
});
