import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
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

describe('GET /api/v1/clusters/{id}/changes', () => {
  let database: TestDatabase;
  let api: TestApi;
  let clusterId: string;
  let path: string;
  let clientId: string;
  let staging: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    const db = database.db;
    clientId = await insertClient(db, 'acme-route');
    const prod = await insertEnvironment(db, clientId, 'production');
    staging = await insertEnvironment(db, clientId, 'staging');
    clusterId = await insertCluster(db, {
      clientId,
      environmentId: prod,
      name: 'prod-a',
    });
    path = `/api/v1/clusters/${clusterId}/changes`;
    await insertNamespace(db, clusterId, 'shop');
    await insertEventSightings(db, clusterId, [
      {
        seen_at: new Date(Date.now() - 60_000).toISOString(),
        namespace: 'shop',
        involved_kind: 'Pod',
        involved_name: 'api-7d9f8c5b4-x2x9k',
        type: 'Warning',
        reason: 'BackOff',
        count: 4,
        message: 'Back-off restarting failed container',
      },
    ]);
    await query(
      db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, summary, details)
       values ('k8s-config', 'workload_scaled', $1, $2, now() - interval '1 hour',
         'Deployment shop/api scaled 3 → 0',
         jsonb_build_object('cluster_id', $3::text, 'kind', 'Deployment',
           'namespace', 'shop', 'name', 'api', 'changes', '[]'::jsonb))`,
      [clientId, prod, clusterId],
    );
    await insertGrant(db, {
      email: 'op@example.com',
      role: 'operator',
      clientId,
    });
    await insertGrant(db, {
      email: 'viewer@example.com',
      role: 'viewer',
      clientId,
      environmentId: prod,
    });
    await insertGrant(db, {
      email: 'sibling@example.com',
      role: 'operator',
      clientId,
      environmentId: staging,
    });
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('merges every source for a caller holding all three permissions, with the same ids on a second read', async () => {
    // Prepare
    const token = await api.token('op@example.com');

    // Act
    const first = await api.get(`${path}?namespace=shop`, token);
    const second = await api.get(`${path}?namespace=shop`, token);

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.sources).toEqual({
      changes: 'ok',
      deploys: 'ok',
      events: 'ok',
      alerts: 'ok',
    });
    expect(first.body.data.items.map((i: { kind: string }) => i.kind)).toEqual([
      'event',
      'change',
    ]);
    expect(first.body.data.items[0]).toMatchObject({
      kind: 'event',
      title: 'BackOff · Pod api-7d9f8c5b4-x2x9k (×4)',
      reason: 'BackOff',
    });
    expect(second.body.data.items.map((i: { id: string }) => i.id)).toEqual(
      first.body.data.items.map((i: { id: string }) => i.id),
    );
    expect(Array.isArray(first.body.data.notes)).toBe(true);
  });

  it('reads only the events of a viewer, the other sources forbidden with notes', async () => {
    // Act
    const view = await api.get(path, await api.token('viewer@example.com'));

    // Assess
    expect(view.status).toBe(200);
    expect(view.body.data.sources).toEqual({
      changes: 'forbidden',
      deploys: 'forbidden',
      events: 'ok',
      alerts: 'forbidden',
    });
    expect(view.body.data.items.map((i: { kind: string }) => i.kind)).toEqual([
      'event',
    ]);
    expect(view.body.data.notes).toEqual(
      expect.arrayContaining([
        'Recorded changes are not shown: they need changes:read.',
        'Alerts are not shown: they need alerts:read.',
      ]),
    );
  });

  it('answers 404 to a caller whose grants are on a sibling environment only', async () => {
    // Act
    const answer = await api.get(path, await api.token('sibling@example.com'));

    // Assess
    expect(answer.status).toBe(404);
  });

  it('refuses an unknown parameter and a bad combination with 400 after the access checks', async () => {
    // Prepare
    const token = await api.token('op@example.com');

    // Act
    const unknown = await api.get(`${path}?since=1h`, token);
    const noNamespace = await api.get(`${path}?workload=api`, token);
    const tooLong = await api.get(
      `${path}?from=2026-01-01T00:00:00Z&to=2026-03-01T00:00:00Z`,
      token,
    );
    const sibling = await api.get(
      `${path}?since=1h`,
      await api.token('sibling@example.com'),
    );

    // Assess
    expect([unknown.status, unknown.body.error.code]).toEqual([
      400,
      'bad_request',
    ]);
    expect(unknown.body.error.details).toEqual({ param: 'since' });
    expect(noNamespace.body.error.details).toEqual({ param: 'workload' });
    expect(tooLong.body.error.details).toEqual({ param: 'from' });
    expect(sibling.status).toBe(404);
  });
  it('lists a client-wide deploy only on a cluster that has its namespace', async () => {
    // Prepare: a second cluster of the client, in staging, without shop.
    const db = database.db;
    const stagingCluster = await insertCluster(db, {
      clientId,
      environmentId: staging,
      name: 'staging-a',
    });
    await insertNamespace(db, stagingCluster, 'billing');
    const deploy = await query<{ id: string }>(
      db,
      `insert into change_events (source, event_type, client_id, environment_id,
         scanned_at, severity, summary, details)
       values ('deployment', 'sync', $1, null, now() - interval '2 hours', 'info',
         'ArgoCD sync: legacy-shop (Synced)',
         '{"provider": "argocd", "app_name": "legacy-shop", "namespace": "shop"}')
       returning id`,
      [clientId],
    );
    await insertGrant(db, {
      email: 'deployer@example.com',
      role: 'operator',
      clientId,
    });
    const token = await api.token('deployer@example.com');
    const deploysOf = (body: {
      data: { items: { kind: string; id: string; scope?: string }[] };
    }) =>
      body.data.items
        .filter((item) => item.kind === 'deploy')
        .map((item) => [item.id, item.scope]);

    // Act
    const here = await api.get(path, token);
    const hereInShop = await api.get(`${path}?namespace=shop`, token);
    const elsewhere = await api.get(
      `/api/v1/clusters/${stagingCluster}/changes`,
      token,
    );

    // Assess
    const listed = [[`deploy:${deploy[0]?.id}`, 'client']];
    expect([here.status, hereInShop.status, elsewhere.status]).toEqual([
      200, 200, 200,
    ]);
    expect(deploysOf(here.body)).toEqual(listed);
    expect(deploysOf(hereInShop.body)).toEqual(listed);
    expect(deploysOf(elsewhere.body)).toEqual([]);
    expect(elsewhere.body.data.notes.join(' ')).not.toContain('client-wide');
  });

  it('serves 60 reads a minute per user, then answers 429 with Retry-After', async () => {
    // Prepare
    await insertGrant(database.db, {
      email: 'busy@example.com',
      role: 'operator',
      clientId: (
        await query<{ client_id: string }>(
          database.db,
          'select client_id from clusters where id = $1',
          [clusterId],
        )
      )[0]?.client_id as string,
    });
    const token = await api.token('busy@example.com');

    // Act
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      statuses.push((await api.get(path, token)).status);
    }
    const refused = await api.get(path, token);

    // Assess
    expect(statuses).toEqual(Array(60).fill(200));
    expect(refused.status).toBe(429);
    expect(refused.body.error.code).toBe('rate_limited');
    expect(refused.body.error.message).toBe('too many what-changed reads');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});
