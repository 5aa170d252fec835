import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import {
  addWebhookSource,
  disableWebhookSource,
  listWebhookSources,
} from '../../../shared/webhooks/sources.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const fixture = (name: string) =>
  readFileSync(
    new URL(`../../fixtures/webhooks/${name}`, import.meta.url),
    'utf8',
  );

describe('webhook sources and the webhook route', () => {
  let database: TestDatabase;
  let api: TestApi;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database);
    tenant = await createTenant(database.db);
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  async function post(
    id: string,
    body: string,
    headers: Record<string, string>,
  ) {
    const answer = await api.post(`/api/v1/webhooks/${id}`, body, headers);
    return { status: answer.status, body: answer.body };
  }

  const json = (secret: string) => ({
    authorization: `Bearer ${secret}`,
    'content-type': 'application/json',
  });

  const deploys = (clientId: string) =>
    query<{
      event_type: string;
      environment_id: string | null;
      scanned_at: Date;
      severity: string;
      summary: string;
      details: Record<string, unknown>;
    }>(
      database.db,
      `select event_type, environment_id, scanned_at, severity, summary, details
       from change_events where source = 'deployment' and client_id = $1
       order by scanned_at`,
      [clientId],
    );

  it('refuses a wrong secret, a missing one, a disabled source and an unknown id with one 401 body', async () => {
    // Prepare
    const source = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      kind: 'argocd',
    });
    const disabled = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      kind: 'argocd',
    });
    await disableWebhookSource(database.db, disabled.id);
    const body = fixture('argocd-sync-succeeded.json');

    // Act
    const answers = [
      await post(source.id, body, json(`${source.secret}x`)),
      await post(source.id, body, { 'content-type': 'application/json' }),
      await post(disabled.id, body, json(disabled.secret)),
      await post(
        '6f1c0a52-3f5e-4d7a-9b1e-2c8d4e6f7a90',
        body,
        json(source.secret),
      ),
      await post('not-a-uuid', body, json(source.secret)),
    ];

    // Assess
    for (const answer of answers) {
      expect(answer).toEqual({
        status: 401,
        body: {
          error: {
            code: 'unauthorized',
            message: 'missing or invalid webhook credentials',
          },
        },
      });
    }
    expect(await deploys(tenant.clientId)).toEqual([]);
  });

  it('lists sources with their scope and state, never a secret', async () => {
    // Prepare
    const other = await createTenant(database.db);
    const pinned = await addWebhookSource(database.db, {
      clientSlug: other.clientSlug,
      envSlug: other.envSlug,
      kind: 'alertmanager',
    });
    await disableWebhookSource(database.db, pinned.id);

    // Act
    const listed = await listWebhookSources(database.db, other.clientSlug);

    // Assess
    expect(listed).toEqual([
      expect.objectContaining({
        id: pinned.id,
        kind: 'alertmanager',
        client: other.clientSlug,
        environment: other.envSlug,
        disabledAt: expect.any(Date),
      }),
    ]);
    expect(JSON.stringify(listed)).not.toContain(pinned.secret);
    const stored = await queryOne(
      database.db,
      `select encode(secret_sha256, 'hex') as hash from webhook_sources where id = $1`,
      [pinned.id],
    );
    expect(String(stored.hash)).not.toContain(pinned.secret);
  });

  it('stores the documented template output as one deploy, and a replay once', async () => {
    // Prepare
    const client = await createTenant(database.db);
    const source = await addWebhookSource(database.db, {
      clientSlug: client.clientSlug,
      envSlug: client.envSlug,
      kind: 'argocd',
    });
    const body = fixture('argocd-sync-succeeded.json');

    // Act
    const first = await post(source.id, body, json(source.secret));
    const replay = await post(source.id, body, json(source.secret));

    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data.created).toBe(true);
    expect(replay.body.data).toEqual({
      id: first.body.data.id,
      created: false,
    });
    const rows = await deploys(client.clientId);
    expect(rows).toEqual([
      {
        event_type: 'sync',
        environment_id: client.environmentId,
        scanned_at: new Date('2024-03-05T07:33:04Z'),
        severity: 'info',
        summary: 'ArgoCD sync: velero-test (Synced)',
        details: {
          provider: 'argocd',
          trigger: 'on-sync-succeeded',
          app_name: 'velero-test',
          app_namespace: 'argo-cd',
          project: 'sre',
          namespace: 'test-lla',
          destination_server: null,
          destination_name: 'gke-alpha-01-europe-west1',
          repo_url: 'https://github.com/foo/manifests-velero.git',
          revision: 'ea8759964626a583667a2bfd08f334ec2070040a',
          sync_status: 'Synced',
          health_status: 'Healthy',
          phase: 'Succeeded',
          message: 'successfully synced (all tasks run)',
          started_at: '2024-03-05T07:33:03Z',
          finished_at: '2024-03-05T07:33:04Z',
          actor: 'foo@example.com',
          resources: [
            {
              group: '',
              kind: 'Service',
              namespace: 'test-lla',
              name: 'test-lla',
              status: 'Synced',
              message: 'service/test-lla serverside-applied',
            },
            {
              group: 'apps',
              kind: 'Deployment',
              namespace: 'test-lla',
              name: 'test-lla',
              status: 'Synced',
              message: 'deployment.apps/test-lla serverside-applied',
            },
          ],
          resources_truncated: false,
        },
      },
    ]);
  });

  it('stores a health trigger without an operation at receipt time, client-wide', async () => {
    // Prepare
    const client = await createTenant(database.db);
    const source = await addWebhookSource(database.db, {
      clientSlug: client.clientSlug,
      kind: 'argocd',
    });
    const before = Date.now();

    // Act
    const answer = await post(
      source.id,
      fixture('argocd-health-degraded.json'),
      json(source.secret),
    );

    // Assess
    expect(answer.status).toBe(200);
    const [row] = await deploys(client.clientId);
    expect(row).toMatchObject({
      event_type: 'health_degraded',
      environment_id: null,
      severity: 'warning',
      summary: 'ArgoCD health degraded: velero-test (Synced)',
    });
    expect(row?.scanned_at.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(row?.details).toMatchObject({
      actor: null,
      phase: null,
      resources: [],
    });
  });

  it('never stores unknown fields, and strips credentials from repo_url', async () => {
    // Prepare
    const client = await createTenant(database.db);
    const source = await addWebhookSource(database.db, {
      clientSlug: client.clientSlug,
      kind: 'argocd',
    });
    const body = JSON.parse(fixture('argocd-sync-succeeded.json'));
    body.repo_url =
      'https://deploy:ghp_s3cr3tT0ken@github.com/foo/manifests.git';
    body.spec = { source: { helm: { values: 'password: hunter2' } } };
    body.operation.sync = { manifests: ['kind: Secret'] };

    // Act
    const answer = await post(
      source.id,
      JSON.stringify(body),
      json(source.secret),
    );

    // Assess
    expect(answer.status).toBe(200);
    const stored = await query(
      database.db,
      `select details::text as text from change_events where client_id = $1`,
      [client.clientId],
    );
    const text = String(stored[0]?.text);
    expect(text).toContain(
      '"repo_url": "https://github.com/foo/manifests.git"',
    );
    for (const secret of [
      'ghp_s3cr3tT0ken',
      'hunter2',
      'kind: Secret',
      'deploy:',
    ]) {
      expect(text).not.toContain(secret);
    }
  });

  it('refuses a deploy without a destination namespace with 422 naming the field', async () => {
    // Prepare
    const client = await createTenant(database.db);
    const source = await addWebhookSource(database.db, {
      clientSlug: client.clientSlug,
      kind: 'argocd',
    });
    const body = JSON.parse(fixture('argocd-sync-succeeded.json'));
    body.destination.namespace = null;

    // Act
    const answer = await post(
      source.id,
      JSON.stringify(body),
      json(source.secret),
    );

    // Assess
    expect(answer.status).toBe(422);
    expect(answer.body.error.details).toEqual({
      field: 'destination.namespace',
    });
    expect(answer.body.error.message).toMatch(/^destination\.namespace: /);
    expect(await deploys(client.clientId)).toEqual([]);
  });

  it('authenticates before it reads the query string: a secret in the query is a 401, a parameter after a good secret a 400', async () => {
    // Prepare
    const source = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      kind: 'argocd',
    });
    const body = fixture('argocd-sync-succeeded.json');

    // Act
    const inQuery = await post(
      `${source.id}?secret=${encodeURIComponent(source.secret)}`,
      body,
      { 'content-type': 'application/json' },
    );
    const wrongWithQuery = await post(`${source.id}?debug=1`, body, json('x'));
    const goodWithQuery = await post(
      `${source.id}?debug=1`,
      body,
      json(source.secret),
    );

    // Assess
    for (const answer of [inQuery, wrongWithQuery]) {
      expect(answer).toEqual({
        status: 401,
        body: {
          error: {
            code: 'unauthorized',
            message: 'missing or invalid webhook credentials',
          },
        },
      });
    }
    expect([goodWithQuery.status, goodWithQuery.body.error.code]).toEqual([
      400,
      'bad_request',
    ]);
    expect(await deploys(tenant.clientId)).toEqual([]);
  });

  it("names a refused label by its map, never by the sender's own key", async () => {
    // Prepare
    const source = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      kind: 'alertmanager',
    });
    const hostileKey = "' OR 1=1-- \u202e";
    const alert = {
      status: 'firing',
      labels: { alertname: 'X' },
      startsAt: '2026-03-01T10:00:00Z',
    };
    const group = (extra: object) =>
      JSON.stringify({
        groupKey: '{}:{alertname="X"}',
        status: 'firing',
        alerts: [alert],
        ...extra,
      });

    // Act
    const answers = [
      await post(
        source.id,
        group({ groupLabels: { [hostileKey]: 'a\u0000b' } }),
        json(source.secret),
      ),
      await post(
        source.id,
        group({ commonLabels: { [hostileKey]: 17 } }),
        json(source.secret),
      ),
      await post(
        source.id,
        group({ groupLabels: { [`${hostileKey}${'k'.repeat(400)}`]: 'v' } }),
        json(source.secret),
      ),
    ];

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([422, 422, 422]);
    expect(answers.map((answer) => answer.body.error.details)).toEqual([
      { field: 'groupLabels.<key>' },
      { field: 'commonLabels.<key>' },
      { field: 'groupLabels.<key>' },
    ]);
    for (const answer of answers) {
      const text = JSON.stringify(answer.body);
      expect(text).not.toContain('OR 1=1');
      expect(text).not.toContain('kkkk');
    }
  });

  it('refuses a body over 1 MiB with 413, one not JSON with 400, another media type with 415', async () => {
    // Prepare
    const source = await addWebhookSource(database.db, {
      clientSlug: tenant.clientSlug,
      kind: 'alertmanager',
    });
    const big = JSON.stringify({ padding: 'x'.repeat(1024 * 1024) });

    // Act
    const tooLarge = await post(source.id, big, json(source.secret));
    const notJson = await post(source.id, '{"receiver":', json(source.secret));
    const text = await post(source.id, '{}', {
      authorization: `Bearer ${source.secret}`,
      'content-type': 'text/plain',
    });

    // Assess
    expect([tooLarge.status, tooLarge.body.error.code]).toEqual([
      413,
      'payload_too_large',
    ]);
    expect([notJson.status, notJson.body.error.code]).toEqual([
      400,
      'bad_request',
    ]);
    expect([text.status, text.body.error.code]).toEqual([
      415,
      'unsupported_media_type',
    ]);
  });
});
