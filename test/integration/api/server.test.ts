import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  loadLocalJwtKey,
  signLocalToken,
} from '../../../shared/auth/local-jwt.ts';
import { createPool, type Db, query } from '../../../shared/db/pool.ts';
import { logger } from '../../../shared/observability/logger.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('local api server', () => {
  let database: TestDatabase;
  let api: TestApi;
  let ready = true;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    api = await startTestApi(database, { ready: () => ready });
    const clientId = await insertClient(database.db, 'acme');
    const environmentId = await insertEnvironment(
      database.db,
      clientId,
      'production',
    );
    clusterId = await insertCluster(database.db, {
      clientId,
      environmentId,
      name: 'k8s-prod-01',
    });
    await insertGrant(database.db, {
      email: 'Alice@Example.test',
      role: 'viewer',
      clientId,
    });
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('answers /healthz 200 while ready and 503 while not', async () => {
    // Act
    const up = await api.get('/healthz');
    ready = false;
    const down = await api.get('/healthz');
    ready = true;

    // Assess
    expect(up).toMatchObject({ status: 200, body: { status: 'ok' } });
    expect(down.status).toBe(503);
  });

  it('answers an unknown path with a 404 JSON error', async () => {
    // Act
    const response = await api.get('/api/v1/nope');

    // Assess
    expect(response.status).toBe(404);
    expect(response.headers.get('content-type')).toMatch(/application\/json/);
    expect(response.body).toEqual({
      error: { code: 'not_found', message: 'no such route' },
    });
  });

  it('authenticates by email case-insensitively against the grants', async () => {
    // Prepare
    const token = await api.token('alice@example.TEST');

    // Act
    const response = await api.get(`/api/v1/clusters/${clusterId}`, token);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data.id).toBe(clusterId);
  });

  it('refuses a token it accepted before, once the token has expired', async () => {
    // Prepare
    const token = await api.token('alice@example.test', { ttlSeconds: 60 });
    const first = await api.get(`/api/v1/clusters/${clusterId}`, token);
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 61_000 });

    try {
      // Act
      const later = await api.get(`/api/v1/clusters/${clusterId}`, token);

      // Assess
      expect(first.status).toBe(200);
      expect(later.status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it.each([
    [
      'an expired token',
      async () =>
        `Bearer ${await api.token('alice@example.test', { ttlSeconds: -60 })}`,
    ],
    [
      'a token signed by another key',
      async () => `Bearer ${await api.foreignToken('alice@example.test')}`,
    ],
    [
      'a token for another audience',
      async () => {
        const key = await loadLocalJwtKey(api.dataDir, {
          audience: 'someone-else',
        });
        return `Bearer ${await signLocalToken(key, { email: 'alice@example.test', sub: 'a', ttlSeconds: 60 })}`;
      },
    ],
    ['a malformed token', async () => 'Bearer not.a.jwt'],
    ['another scheme', async () => 'Basic YWxpY2U6c2VjcmV0'],
    ['no token', async () => ''],
  ])('refuses %s with 401 unauthorized', async (_, authorization) => {
    // Prepare
    const header = await authorization();

    // Act
    const response = await fetch(`${api.server.url}/api/v1/clusters`, {
      headers: header ? { authorization: header } : {},
    });

    // Assess
    expect(response.status).toBe(401);
    expect(await response.json()).toEqual({
      error: { code: 'unauthorized', message: 'authentication required' },
    });
  });

  it('gives a caller without an email claim no grants (403)', async () => {
    // Prepare
    const key = await loadLocalJwtKey(api.dataDir);
    const token = await signLocalToken(key, {
      sub: 'service-account',
      ttlSeconds: 60,
    });

    // Act
    const response = await api.get('/api/v1/clusters', token);

    // Assess
    expect(response.status).toBe(403);
    expect(response.body.error.code).toBe('forbidden');
  });

  it('answers a path with dot segments 404, as API Gateway does, never another route', async () => {
    // Prepare: fetch() would resolve the dot segments itself, so the raw
    // request line is sent as is.
    const token = await api.token('alice@example.test');
    const rawGet = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = request(`${api.server.url}/`, {
          path,
          headers: { authorization: `Bearer ${token}` },
        });
        req.on('response', (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => {
            body += chunk;
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        req.on('error', reject);
        req.end();
      });
    const paths = [
      `/api/v1/clusters/${clusterId}/workloads/%2e%2e/pods`,
      `/api/v1/clusters/${clusterId}/workloads/%2E./pods`,
      '/healthz/../api/v1/clusters',
      '/api/v1/./clusters',
    ];

    // Act
    const responses = await Promise.all(paths.map(rawGet));
    const plain = await rawGet('/api/v1/clusters');

    // Assess
    for (const response of responses) {
      expect(response.status).toBe(404);
      expect(JSON.parse(response.body)).toEqual({
        error: { code: 'not_found', message: 'no such route' },
      });
    }
    expect(plain.status).toBe(200);
  });

  it("gives a token whose email is not verified none of that email's grants (403), naming its subject", async () => {
    // Prepare: signed by the server's own key, so only the claim differs.
    const unverified = await signLocalToken(api.server.jwtKey, {
      email: 'alice@example.test',
      emailVerified: false,
      sub: 'idp|mallory',
      ttlSeconds: 600,
    });
    const verified = await signLocalToken(api.server.jwtKey, {
      email: 'alice@example.test',
      emailVerified: true,
      sub: 'idp|alice',
      ttlSeconds: 600,
    });

    // Act
    const refused = await api.get('/api/v1/clusters', unverified);
    const accepted = await api.get('/api/v1/clusters', verified);

    // Assess
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('forbidden');
    expect(accepted.status).toBe(200);
    expect(accepted.body.data).toHaveLength(1);
  });

  it('routes a literal segment before a path parameter', async () => {
    // Prepare
    const token = await api.token('alice@example.test');

    // Act: /summary is a route of its own, not a cluster id.
    const response = await api.get(
      `/api/v1/clusters/${clusterId}/summary`,
      token,
    );

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toHaveProperty('generated_at');
  });
});

describe('error responses', () => {
  let database: TestDatabase;
  let emptyDb: Db;
  let api: TestApi;
  const emptyName = `k8s_inventory_empty_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    database = await createTestDatabase();
    // A database without the schema: every handler's first query fails.
    await query(database.db, `create database ${emptyName}`);
    const url = new URL(database.url);
    url.pathname = `/${emptyName}`;
    emptyDb = createPool({ connectionString: url.toString(), max: 2 });
    api = await startTestApi(emptyDb);
  });
  afterAll(async () => {
    await api?.close();
    await emptyDb?.end();
    await query(
      database.db,
      `drop database if exists ${emptyName} with (force)`,
    );
    await database?.drop();
  });

  it('answers a failure it did not expect with a generic 500 and logs it', async () => {
    // Prepare
    const logged = vi.spyOn(logger, 'error');
    const token = await api.token('alice@example.test');

    // Act
    const response = await api.get(
      '/api/v1/clusters?search=secret-value',
      token,
    );

    // Assess
    expect(response.status).toBe(500);
    expect(response.body).toEqual({
      error: { code: 'internal_error', message: 'internal server error' },
    });
    expect(logged).toHaveBeenCalled();
    logged.mockRestore();
  });
});
