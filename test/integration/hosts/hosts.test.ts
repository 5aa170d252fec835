/**
 * GET /api/v1/hosts (PQL) and GET /api/v1/hosts/{hostID}: the spec's PQL
 * examples and every PQL error through the route, the lists' scoping (an
 * environment grant sees its environment's hosts only), and hosts managed
 * as `npm run host` and the admin function do, with nodes relinking on
 * their cluster's next sync.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addHost, removeHost } from '../../../shared/hosts/repo.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { runAdminCommand } from '../../../shared/tenancy/admin.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

let clock = Date.parse('2026-06-15T12:00:00Z');

async function syncCluster(
  database: TestDatabase,
  tenant: Tenant,
  agentId: string,
  cluster: { name: string; version: string; platform: string },
  nodes: string[],
): Promise<string> {
  clock += 60_000;
  const at = new Date(clock);
  const inventory = parseInventory({
    type: 'kubernetes',
    schema_version: 1,
    agent_id: agentId,
    timestamp: at.toISOString(),
    cluster: { ...cluster, status: 'healthy' },
    nodes: nodes.map((name) => ({ name, status: 'Ready' })),
  });
  const result = await syncInventory(
    database.db,
    { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
    inventory,
    { now: () => at },
  );
  return result.clusterId;
}

describe('hosts routes', () => {
  let database: TestDatabase;
  let api: TestApi;
  let prod: Tenant;
  let staging: Tenant;
  let wide: string;
  let prodOnly: string;
  let stagingOnly: string;
  const ids: Record<string, string> = {};
  let prodCluster: string;

  const hosts = (pql: string | undefined, token = wide, extra = '') =>
    api.get(
      `/api/v1/hosts?${pql === undefined ? '' : `pql=${encodeURIComponent(pql)}`}${extra}`,
      token,
    );
  const names = (body: { data: { hostname: string }[] }) =>
    body.data.map((h) => h.hostname);

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    api = await startTestApi(db);
    prod = await createTenant(db, 'acme', 'production');
    staging = await createTenant(db, 'acme', 'staging');
    const add = async (
      tenant: Tenant,
      hostname: string,
      os?: string,
      ip?: string,
    ) => {
      ids[hostname] = (
        await addHost(db, {
          clientSlug: tenant.clientSlug,
          envSlug: tenant.envSlug,
          hostname,
          os,
          ip,
        })
      ).id;
    };
    await add(prod, 'prod-n1', 'Ubuntu', '10.0.0.1');
    await add(prod, 'prod-n2', 'Ubuntu 22.04');
    await add(prod, 'prod-n3', 'RHEL 9');
    await add(prod, 'prod-db', 'Ubuntu');
    await add(staging, 'stage-n1', 'Ubuntu');
    prodCluster = await syncCluster(
      database,
      prod,
      randomUUID(),
      { name: 'k8s-prod-01', version: 'v1.29.4', platform: 'rke2' },
      ['prod-n1', 'prod-n2'],
    );
    await syncCluster(
      database,
      prod,
      randomUUID(),
      { name: 'k8s-prod-02', version: 'v1.30.1', platform: 'eks' },
      ['prod-n3'],
    );
    await syncCluster(
      database,
      staging,
      randomUUID(),
      { name: 'k8s-prod-01', version: 'v1.29.2', platform: 'rke2' },
      ['stage-n1'],
    );
    await insertGrant(db, {
      email: 'wide@example.test',
      role: 'viewer',
      clientId: prod.clientId,
    });
    await insertGrant(db, {
      email: 'prod@example.test',
      role: 'viewer',
      clientId: prod.clientId,
      environmentId: prod.environmentId,
    });
    await insertGrant(db, {
      email: 'staging@example.test',
      role: 'viewer',
      clientId: prod.clientId,
      environmentId: staging.environmentId,
    });
    wide = await api.token('wide@example.test');
    prodOnly = await api.token('prod@example.test');
    stagingOnly = await api.token('staging@example.test');
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('answers the first spec example as written: an exact OS on a named cluster', async () => {
    // Act
    const response = await hosts(
      'cluster.name = "k8s-prod-01" AND host.os = "Ubuntu"',
    );

    // Assess: prod-n2's OS is "Ubuntu 22.04", not "Ubuntu"; prod-db runs no node.
    expect(response.status, response.text).toBe(200);
    expect(names(response.body)).toEqual(['prod-n1', 'stage-n1']);
    expect(response.body.data[0]).toEqual({
      id: ids['prod-n1'],
      hostname: 'prod-n1',
      ip_address: '10.0.0.1',
      os: 'Ubuntu',
      client_id: prod.clientId,
      environment_id: prod.environmentId,
      nodes: [
        {
          cluster_id: prodCluster,
          cluster_name: 'k8s-prod-01',
          node_name: 'prod-n1',
          status: 'Ready',
        },
      ],
    });
    expect(response.body.meta).toEqual({ total: 2, page: 1, per_page: 20 });
  });

  it('matches a prefix with a case-insensitive glob, and the second spec example', async () => {
    // Act
    const prefix = await hosts(
      'cluster.name = "k8s-prod-01" AND host.os ~ "ubuntu*"',
    );
    const version = await hosts('cluster.version ~ "v1.29*"');
    const single = await hosts(
      'cluster.version ~ "v1.29.?" and cluster.platform = "rke2"',
    );

    // Assess
    expect(names(prefix.body)).toEqual(['prod-n1', 'prod-n2', 'stage-n1']);
    expect(names(version.body)).toEqual(['prod-n1', 'prod-n2', 'stage-n1']);
    expect(names(single.body)).toEqual(['prod-n1', 'prod-n2', 'stage-n1']);
  });

  it('never matches an unlinked host on a cluster field, even negated, but does on host fields', async () => {
    // Act
    const negated = await hosts('NOT cluster.name = "k8s-prod-02"');
    const hostOnly = await hosts(
      'host.os = "Ubuntu" AND NOT host.hostname ~ "*n1"',
    );
    const different = await hosts('host.os != "Ubuntu"');

    // Assess
    expect(names(negated.body)).toEqual(['prod-n1', 'prod-n2', 'stage-n1']);
    expect(names(hostOnly.body)).toEqual(['prod-db']);
    expect(names(different.body)).toEqual(['prod-n2', 'prod-n3']);
  });

  it('filters by the environment slug and pages by hostname', async () => {
    // Act
    const env = await hosts(
      'host.environment = "staging" OR host.ip = "10.0.0.1"',
    );
    const page = await hosts(undefined, wide, '&per_page=2&page=2');

    // Assess
    expect(names(env.body)).toEqual(['prod-n1', 'stage-n1']);
    expect(names(page.body)).toEqual(['prod-n2', 'prod-n3']);
    expect(page.body.meta).toEqual({ total: 5, page: 2, per_page: 2 });
  });

  it('pages the hosts a cluster field matches, and counts them past the last page', async () => {
    // Act
    const pql = 'cluster.version ~ "v1.29*"';
    const second = await hosts(pql, wide, '&per_page=2&page=2');
    const beyond = await hosts(pql, wide, '&per_page=2&page=3');

    // Assess
    expect(names(second.body)).toEqual(['stage-n1']);
    expect(second.body.meta).toEqual({ total: 3, page: 2, per_page: 2 });
    expect(names(beyond.body)).toEqual([]);
    expect(beyond.body.meta).toEqual({ total: 3, page: 3, per_page: 2 });
  });

  it("shows an environment grant its environment's hosts only, in the list and one by one", async () => {
    // Act
    const prodList = await hosts(undefined, prodOnly);
    const stagingList = await hosts('host.os ~ "*"', stagingOnly);
    const foreign = await api.get(
      `/api/v1/hosts/${ids['prod-n1']}`,
      stagingOnly,
    );
    const own = await api.get(`/api/v1/hosts/${ids['stage-n1']}`, stagingOnly);
    const malformed = await api.get('/api/v1/hosts/not-a-uuid', stagingOnly);

    // Assess
    expect(names(prodList.body)).toEqual([
      'prod-db',
      'prod-n1',
      'prod-n2',
      'prod-n3',
    ]);
    expect(names(stagingList.body)).toEqual(['stage-n1']);
    expect(foreign.status).toBe(404);
    expect(own.status).toBe(200);
    expect(own.body.data.nodes).toHaveLength(1);
    expect(malformed.status).toBe(404);
  });

  it.each([
    ['', 1, 'field'],
    ['cluster.name', 13, '=, != or ~'],
    ['cluster.name = k8s', 16, 'value'],
    ['cluster.name = "k8s', 16, '"'],
    ['host.os = "a\\x"', 13, '\\" or \\\\'],
    ['host.kernel = "6"', 1, 'field'],
    ['(host.os = "a"', 15, '")"'],
    ['host.os = "a")', 14, 'AND, OR or end'],
    ['host.os = "a" AND', 18, 'field'],
    ['host.os == "a"', 10, 'value'],
    [
      'host.os = "a" ; drop',
      15,
      'a field, a keyword, an operator, a value or a parenthesis',
    ],
  ])(
    'refuses %j with 400 invalid_pql at position %i',
    async (pql, position, expected) => {
      // Act
      const response = await hosts(pql);

      // Assess
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_pql');
      expect(response.body.error.details).toEqual({
        param: 'pql',
        position,
        expected,
      });
      expect(response.body.error.message).toContain(`position ${position}`);
    },
  );

  it('refuses an expression over 1,000 characters or 20 levels deep, and lists the known fields', async () => {
    // Act
    const long = await hosts(`host.os = "${'a'.repeat(1000)}"`);
    const deep = await hosts(`${'('.repeat(21)}host.os = "a"${')'.repeat(21)}`);
    const unknown = await hosts('host.kernel = "6"');

    // Assess
    expect(long.body.error.code).toBe('invalid_pql');
    expect(long.body.error.message).toContain('1000 characters');
    expect(deep.body.error.code).toBe('invalid_pql');
    expect(deep.body.error.message).toContain('nesting deeper than 20');
    expect(unknown.body.error.message).toContain(
      'host.hostname, host.ip, host.os, host.environment, cluster.name, cluster.version, cluster.platform, cluster.status',
    );
  });

  it('answers 400 bad_request for a parameter it does not know, and 401 without a token', async () => {
    // Act
    const unknown = await hosts(undefined, wide, '&q=x');
    const anonymous = await api.get('/api/v1/hosts');

    // Assess
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({
      code: 'bad_request',
      details: { param: 'q' },
    });
    expect(anonymous.status).toBe(401);
  });

  it('relinks nodes on the next sync after a host is added through the admin function, and unlinks them when it is removed', async () => {
    // Prepare
    const agent = randomUUID();
    const cluster = { name: 'k8s-late', version: 'v1.31.0', platform: 'k3s' };
    await syncCluster(database, prod, agent, cluster, ['late-n1']);

    // Act
    const added = await runAdminCommand(database.db, {
      command: 'host-add',
      client: prod.clientSlug,
      environment: prod.envSlug,
      hostname: 'late-n1',
      os: 'Debian 12',
    });
    const before = await hosts('cluster.name = "k8s-late"');
    await syncCluster(database, prod, agent, cluster, ['late-n1']);
    const after = await hosts('cluster.name = "k8s-late"');
    const listed = await runAdminCommand(database.db, {
      command: 'host-list',
      client: prod.clientSlug,
    });
    await runAdminCommand(database.db, {
      command: 'host-remove',
      id: added.command === 'host-add' ? added.id : '',
    });
    const removed = await hosts('host.hostname = "late-n1"');

    // Assess
    expect(names(before.body)).toEqual([]);
    expect(names(after.body)).toEqual(['late-n1']);
    expect(listed.command === 'host-list' && listed.hosts).toContainEqual(
      expect.objectContaining({
        hostname: 'late-n1',
        linkedNodes: 1,
        os: 'Debian 12',
      }),
    );
    expect(removed.body.data).toEqual([]);
  });

  it('refuses bad host commands naming the field', async () => {
    // Act & Assess
    await expect(
      runAdminCommand(database.db, {
        command: 'host-add',
        client: prod.clientSlug,
        environment: prod.envSlug,
        hostname: 'ok-host',
        ip: '999.1.1.1',
      }),
    ).rejects.toThrow('ip: must be an IPv4 or IPv6 address');
    await expect(
      runAdminCommand(database.db, {
        command: 'host-add',
        client: prod.clientSlug,
        environment: 'nowhere',
        hostname: 'ok-host',
      }),
    ).rejects.toThrow('environment: client acme has no environment nowhere');
    await expect(
      runAdminCommand(database.db, { command: 'host-add', client: 'acme' }),
    ).rejects.toThrow('invalid admin command');
    await expect(removeHost(database.db, randomUUID())).rejects.toThrow(
      'id: no host',
    );
  });
});
