import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
  insertNode,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('list clusters', () => {
  let database: TestDatabase;
  let api: TestApi;
  let token: string;
  let paging: { clientId: string; production: string; staging: string };
  let search: { clientId: string; names: Record<string, string> };

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    api = await startTestApi(database);

    // 25 clusters c-01..c-25 in one client: 20 in production, 5 in staging,
    // every fifth degraded.
    const pagingClient = await insertClient(db, 'paging');
    const production = await insertEnvironment(db, pagingClient, 'production');
    const staging = await insertEnvironment(db, pagingClient, 'staging');
    for (let i = 1; i <= 25; i++) {
      await insertCluster(db, {
        clientId: pagingClient,
        environmentId: i <= 20 ? production : staging,
        name: `c-${String(i).padStart(2, '0')}`,
        status: i % 5 === 0 ? 'degraded' : 'healthy',
      });
    }
    paging = { clientId: pagingClient, production, staging };

    // Names that LIKE's wildcards and escape character would confuse.
    const searchClient = await insertClient(db, 'search');
    const searchEnv = await insertEnvironment(db, searchClient, 'production');
    const names: Record<string, string> = {};
    for (const name of [
      '100%-prod',
      'a_b',
      'axb',
      'back\\slash',
      'PROD-main',
      'plain',
    ]) {
      names[name] = await insertCluster(db, {
        clientId: searchClient,
        environmentId: searchEnv,
        name,
      });
    }
    search = { clientId: searchClient, names };

    for (const clientId of [pagingClient, searchClient]) {
      await insertGrant(db, {
        email: 'reader@example.test',
        role: 'viewer',
        clientId,
      });
    }
    token = await api.token('reader@example.test');
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  const pagingList = (query: string) =>
    api.get(`/api/v1/clients/${paging.clientId}/clusters${query}`, token);
  const searchNames = async (term: string) => {
    const response = await api.get(
      `/api/v1/clients/${search.clientId}/clusters?search=${encodeURIComponent(term)}`,
      token,
    );
    expect(response.status).toBe(200);
    return (response.body.data as { name: string }[]).map((c) => c.name);
  };

  it('returns the first 20 clusters by name with meta {total, page, per_page}', async () => {
    // Act
    const response = await pagingList('');

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.meta).toEqual({ total: 25, page: 1, per_page: 20 });
    const names = response.body.data.map((c: { name: string }) => c.name);
    expect(names).toEqual(
      Array.from(
        { length: 20 },
        (_, i) => `c-${String(i + 1).padStart(2, '0')}`,
      ),
    );
    expect(Object.keys(response.body.data[0]).sort()).toEqual(
      [
        'id',
        'asset_id',
        'client_id',
        'environment_id',
        'name',
        'display_name',
        'slug',
        'version',
        'platform',
        'status',
        'agent_status',
        'node_count',
        'namespace_count',
        'workload_count',
        'last_seen_at',
      ].sort(),
    );
  });

  it('lists each cluster with the values Get Cluster gives', async () => {
    // Act
    const list = await pagingList('?per_page=3');
    const item = list.body.data[0] as Record<string, unknown>;
    const single = await api.get(`/api/v1/clusters/${item.id}`, token);

    // Assess
    expect(single.status).toBe(200);
    expect(item.last_seen_at).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/,
    );
    for (const [key, value] of Object.entries(item)) {
      expect(single.body.data[key], key).toEqual(value);
    }
  });

  it.each(['1000', '99999999999999999999'])(
    'clamps per_page=%s to 100 and echoes it',
    async (perPage) => {
      // Act
      const response = await pagingList(`?per_page=${perPage}`);

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.meta).toEqual({ total: 25, page: 1, per_page: 100 });
      expect(response.body.data).toHaveLength(25);
    },
  );

  it('takes an empty page or per_page as the default', async () => {
    // Act
    const response = await pagingList('?page=&per_page=');

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.meta).toEqual({ total: 25, page: 1, per_page: 20 });
  });

  it('serves later pages, and an empty page past the end with the total', async () => {
    // Act
    const third = await pagingList('?page=3&per_page=10');
    const beyond = await pagingList('?page=9&per_page=10');

    // Assess
    expect(third.body.meta).toEqual({ total: 25, page: 3, per_page: 10 });
    expect(third.body.data.map((c: { name: string }) => c.name)).toEqual([
      'c-21',
      'c-22',
      'c-23',
      'c-24',
      'c-25',
    ]);
    expect(beyond.status).toBe(200);
    expect(beyond.body).toEqual({
      data: [],
      meta: { total: 25, page: 9, per_page: 10 },
    });
  });

  it('reads every cluster by following pages while page * per_page < total', async () => {
    // Act
    const seen: string[] = [];
    let page = 1;
    for (;;) {
      const response = await pagingList(`?page=${page}&per_page=7`);
      seen.push(...response.body.data.map((c: { id: string }) => c.id));
      const { total, per_page } = response.body.meta;
      if (page * per_page >= total) break;
      page++;
    }

    // Assess
    expect(seen).toHaveLength(25);
    expect(new Set(seen).size).toBe(25);
  });

  it.each([
    ['?page=0', 'page'],
    ['?page=-1', 'page'],
    ['?page=1000001', 'page'],
    ['?per_page=0', 'per_page'],
    ['?per_page=abc', 'per_page'],
    ['?page=1&page=2', 'page', 'repeated'],
    ['?status=broken', 'status'],
    ['?client_id=not-a-uuid', 'client_id'],
    ['?environment_id=42', 'environment_id'],
    ['?include=nodes', 'include'],
    ['?include=', 'include'],
    ['?include=capacity&include=capacity', 'include', 'repeated'],
    [`?search=${'x'.repeat(101)}`, 'search'],
    ['?search=a%01b', 'search'],
    ['?search=%09web', 'search'],
    [`?search=${'%F0%9F%98%80'.repeat(101)}`, 'search'],
    ['?search=%E0%A4%A', 'search', 'invalid_utf8'],
    ['?status=%FF', 'status', 'invalid_utf8'],
  ])(
    'refuses %s with 400 bad_request naming %s',
    async (query, param, reason?: string) => {
      // Act
      const response = await api.get(`/api/v1/clusters${query}`, token);

      // Assess
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('bad_request');
      expect(response.body.error.details).toEqual(
        reason === undefined ? { param } : { param, reason },
      );
    },
  );

  it('counts a search in characters, not UTF-16 units', async () => {
    // Act: 100 characters outside the BMP, 200 UTF-16 units.
    const response = await pagingList(`?search=${'%F0%9F%98%80'.repeat(100)}`);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.meta.total).toBe(0);
  });

  it('refuses a parameter it does not know, naming it', async () => {
    // Act: a caller must never believe a filter was applied when it was not.
    const response = await pagingList('?per_page=5&unknown=1');

    // Assess
    expect(response.status).toBe(400);
    expect(response.body.error.code).toBe('bad_request');
    expect(response.body.error.details).toEqual({ param: 'unknown' });
  });

  it('filters by status, client and environment, each narrowing the others', async () => {
    // Act
    const degraded = await api.get('/api/v1/clusters?status=degraded', token);
    const byClient = await api.get(
      `/api/v1/clusters?client_id=${search.clientId}`,
      token,
    );
    const stagingDegraded = await api.get(
      `/api/v1/clusters?environment_id=${paging.staging}&status=degraded`,
      token,
    );
    const envRoute = await api.get(
      `/api/v1/environments/${paging.staging}/clusters?per_page=100`,
      token,
    );
    const contradiction = await api.get(
      `/api/v1/clients/${search.clientId}/clusters?client_id=${paging.clientId}`,
      token,
    );

    // Assess
    expect(degraded.body.data.map((c: { name: string }) => c.name)).toEqual([
      'c-05',
      'c-10',
      'c-15',
      'c-20',
      'c-25',
    ]);
    expect(byClient.body.meta.total).toBe(6);
    expect(
      stagingDegraded.body.data.map((c: { name: string }) => c.name),
    ).toEqual(['c-25']);
    expect(envRoute.body.data.map((c: { name: string }) => c.name)).toEqual([
      'c-21',
      'c-22',
      'c-23',
      'c-24',
      'c-25',
    ]);
    expect(contradiction.body).toEqual({
      data: [],
      meta: { total: 0, page: 1, per_page: 20 },
    });
  });

  it('matches search case-insensitively as a literal substring', async () => {
    // Act
    const percent = await searchNames('%');
    const underscore = await searchNames('_');
    const upper = await searchNames('A_B');
    const backslash = await searchNames('\\');
    const prod = await searchNames('prod');
    const padded = await searchNames('  plain  ');

    // Assess
    expect(percent).toEqual(['100%-prod']);
    expect(underscore).toEqual(['a_b']);
    expect(upper).toEqual(['a_b']);
    expect(backslash).toEqual(['back\\slash']);
    expect(prod).toEqual(['100%-prod', 'PROD-main']);
    expect(padded).toEqual(['plain']);
  });

  it('adds capacity, pods_not_running and warning_events_1h only with include=capacity, zeros kept', async () => {
    // Prepare: one cluster with a node, the rest empty.
    await insertNode(database.db, search.names.plain ?? '', {
      name: 'n1',
      status: 'Ready',
      allocatable_cpu_millicores: 2000,
      allocatable_memory_bytes: 4096,
      allocatable_pods: 110,
    });

    // Act
    const without = await api.get(
      `/api/v1/clients/${search.clientId}/clusters`,
      token,
    );
    const withFlag = await api.get(
      `/api/v1/clients/${search.clientId}/clusters?include=capacity`,
      token,
    );

    // Assess
    for (const item of without.body.data) {
      expect(item).not.toHaveProperty('capacity');
      expect(item).not.toHaveProperty('pods_not_running');
      expect(item).not.toHaveProperty('warning_events_1h');
    }
    const empty = withFlag.body.data.find(
      (c: { name: string }) => c.name === 'axb',
    );
    expect(empty.pods_not_running).toBe(0);
    expect(empty.warning_events_1h).toBe(0);
    expect(empty.capacity).toEqual({
      cpu_allocatable_millicores: 0,
      cpu_requested_millicores: 0,
      cpu_limits_millicores: 0,
      cpu_used_millicores: null,
      cpu_allocatable_reporting_millicores: 0,
      cpu_usage_nodes: 0,
      mem_allocatable_bytes: 0,
      mem_requested_bytes: 0,
      mem_limits_bytes: 0,
      mem_used_bytes: null,
      mem_allocatable_reporting_bytes: 0,
      mem_usage_nodes: 0,
      pods_allocatable: 0,
      pods_running: 0,
      nodes_total: 0,
    });
    const plain = withFlag.body.data.find(
      (c: { name: string }) => c.name === 'plain',
    );
    expect(plain.capacity).toMatchObject({
      cpu_allocatable_millicores: 2000,
      mem_allocatable_bytes: 4096,
      pods_allocatable: 110,
      nodes_total: 1,
      cpu_used_millicores: null,
    });
  });

  it('lists a client only for a caller holding assets:read in it, narrowed to its environments', async () => {
    // Prepare
    await insertGrant(database.db, {
      email: 'staging-only@example.test',
      role: 'viewer',
      clientId: paging.clientId,
      environmentId: paging.staging,
    });
    const stagingOnly = await api.token('staging-only@example.test');

    // Act
    const own = await api.get(
      `/api/v1/clients/${paging.clientId}/clusters`,
      stagingOnly,
    );
    const other = await api.get(
      `/api/v1/clients/${search.clientId}/clusters`,
      stagingOnly,
    );
    const malformed = await api.get(
      '/api/v1/clients/acme/clusters',
      stagingOnly,
    );
    const all = await api.get('/api/v1/clusters?per_page=100', stagingOnly);

    // Assess
    expect(own.body.meta.total).toBe(5);
    expect(other.status).toBe(403);
    expect(other.body.error.code).toBe('forbidden');
    expect(malformed.status).toBe(404);
    expect(all.body.data.map((c: { name: string }) => c.name)).toEqual([
      'c-21',
      'c-22',
      'c-23',
      'c-24',
      'c-25',
    ]);
  });

  it('returns the full record from Get Cluster', async () => {
    // Prepare
    const id = search.names['PROD-main'] ?? '';

    // Act
    const response = await api.get(`/api/v1/clusters/${id}`, token);

    // Assess
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      id,
      client_id: search.clientId,
      name: 'PROD-main',
      slug: 'prod-main',
      status: 'unknown',
      agent_status: 'connected',
      node_count: 0,
    });
    for (const field of [
      'agent_id',
      'distribution',
      'api_server_url',
      'cluster_cidr',
      'service_cidr',
      'dns_domain',
      'cloud_provider',
      'cloud_region',
      'cloud_account_id',
      'agent_version',
      'created_at',
      'updated_at',
    ]) {
      expect(response.body.data).toHaveProperty(field);
    }
  });
});
