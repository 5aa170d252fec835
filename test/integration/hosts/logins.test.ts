/**
 * The new statements under the production logins' group roles
 * (shared/db/roles.ts): the graph and hosts reads as the API's
 * `inventory_reader`, the host commands as the admin's `inventory_tenancy`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Db } from '../../../shared/db/pool.ts';
import {
  ensureRolesAndGrants,
  GROUP_ROLES,
  type LoginCredentials,
} from '../../../shared/db/roles.ts';
import { readGraph } from '../../../shared/graph/walk.ts';
import { getHost, listHosts } from '../../../shared/hosts/repo.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { runAdminCommand } from '../../../shared/tenancy/admin.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const prefix = `t${randomBytes(4).toString('hex')}_`;
const login = (kind: 'reader' | 'tenancy'): LoginCredentials => ({
  groupRole: GROUP_ROLES[kind],
  username: `${prefix}${kind}_login`,
  password: `pw-${randomBytes(12).toString('hex')}`,
});

function connectAs(url: string, credentials: LoginCredentials): Db {
  const target = new URL(url);
  target.username = credentials.username;
  target.password = credentials.password;
  return createPool({ connectionString: target.toString(), max: 1 });
}

describe('graph and hosts under the production logins', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let reader: Db;
  let tenancy: Db;
  let clusterId: string;
  const logins = { reader: login('reader'), tenancy: login('tenancy') };

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    await ensureRolesAndGrants(database.db, Object.values(logins), {
      rolePrefix: prefix,
    });
    reader = connectAs(database.url, logins.reader);
    tenancy = connectAs(database.url, logins.tenancy);
    const agentId = randomUUID();
    const at = new Date('2026-06-15T12:00:00Z');
    clusterId = (
      await syncInventory(
        database.db,
        { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
        parseInventory({
          type: 'kubernetes',
          schema_version: 1,
          agent_id: agentId,
          timestamp: at.toISOString(),
          cluster: { name: 'k8s-prod-01', version: 'v1.29.1' },
          nodes: [{ name: 'n1', status: 'Ready' }],
          namespaces: [{ name: 'shop' }],
          pods: [
            {
              namespace: 'shop',
              name: 'p1',
              node_name: 'n1',
              labels: { a: 'b' },
            },
          ],
          services: [{ namespace: 'shop', name: 's', selector: { a: 'b' } }],
          network_policies: [
            { namespace: 'shop', name: 'np', pod_selector: {} },
          ],
        }),
        { now: () => at },
      )
    ).clusterId;
  });
  afterAll(async () => {
    await reader?.end();
    await tenancy?.end();
    await database?.drop();
    const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
    await admin.connect();
    try {
      for (const name of [
        logins.reader.username,
        logins.tenancy.username,
        ...Object.values(GROUP_ROLES).map((role) => `${prefix}${role}`),
      ]) {
        await admin.query(`drop role if exists ${pg.escapeIdentifier(name)}`);
      }
    } finally {
      await admin.end();
    }
  });

  it('lets the admin login add, list and remove hosts, and the reader read them and the graph', async () => {
    // Act
    const added = await runAdminCommand(tenancy, {
      command: 'host-add',
      client: tenant.clientSlug,
      environment: tenant.envSlug,
      hostname: 'n1',
      os: 'Ubuntu',
    });
    const listed = await runAdminCommand(tenancy, {
      command: 'host-list',
      client: tenant.clientSlug,
    });
    const id = added.command === 'host-add' ? added.id : '';
    await database.db.query('update k8s_nodes set host_id = $1', [id]);
    const scope = { clientIds: [tenant.clientId], environments: [] };
    const page = await listHosts(reader, scope, {
      pql: 'cluster.name = "k8s-prod-01" AND host.os ~ "ubuntu*"',
      paging: { page: 1, perPage: 20 },
    });
    const one = await getHost(reader, scope, id);
    const graph = await readGraph(reader, clusterId, {
      kind: 'Pod',
      namespace: 'shop',
      name: 'p1',
      depth: 3,
      limit: 100,
    });
    const removed = await runAdminCommand(tenancy, {
      command: 'host-remove',
      id,
    });

    // Assess
    expect(listed).toMatchObject({
      command: 'host-list',
      hosts: [{ hostname: 'n1', linkedNodes: 0 }],
    });
    expect(page.items.map((h) => h.hostname)).toEqual(['n1']);
    expect(one.nodes).toEqual([
      {
        cluster_id: clusterId,
        cluster_name: 'k8s-prod-01',
        node_name: 'n1',
        status: 'Ready',
      },
    ]);
    expect(graph.nodes.map((n) => n.kind).sort()).toEqual([
      'Host',
      'NetworkPolicy',
      'Node',
      'Pod',
      'Service',
    ]);
    expect(removed).toEqual({ command: 'host-remove', id });
  });

  it('keeps the admin login away from the inventory beyond the nodes host links', async () => {
    // Act & Assess
    await expect(
      tenancy.query('select name from k8s_nodes'),
    ).rejects.toMatchObject({ code: '42501' });
    await expect(
      tenancy.query('update hosts set os = null'),
    ).rejects.toMatchObject({ code: '42501' });
  });
});
