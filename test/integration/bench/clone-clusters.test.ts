/**
 * The scale bench's cloned clusters (bench/clone-clusters.ts) against one
 * the sync wrote: the same rows in every table, references inside the
 * clone, fresh ids and uids, and the same summary read.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cloneClusters, cloneTables } from '../../../bench/clone-clusters.ts';
import { getClusterSummary } from '../../../shared/clusters/summary.ts';
import { query } from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant } from '../../helpers/inventory-db.ts';

let t: TestDatabase;
let templateId: string;
let cloneId: string;

beforeAll(async () => {
  t = await createTestDatabase();
  const tenant = await createTenant(t.db, 'acme');
  const agentId = randomUUID();
  const inventory = parseInventory(
    generateInventory({
      size: 'small',
      seed: 7,
      agentId,
      clusterName: 'acme-production-000',
      timestamp: new Date(Date.now() - 60_000).toISOString(),
    }),
  );
  templateId = (await syncInventory(t.db, { ...tenant, agentId }, inventory))
    .clusterId;
  [cloneId] = (await cloneClusters(
    t.db,
    [{ templateId, name: 'acme-production-001' }],
    1,
  )) as [string];
});

afterAll(async () => {
  await t?.drop();
});

describe('cloneClusters', () => {
  it('copies every table holding a cluster, row for row', async () => {
    const tables = await cloneTables(t.db);
    expect(tables.map((x) => x.name)).toEqual(
      expect.arrayContaining(['k8s_pods', 'k8s_event_history']),
    );
    // Referenced tables come before the tables referencing them.
    const at = (name: string) => tables.findIndex((x) => x.name === name);
    expect(at('k8s_namespaces')).toBeLessThan(at('k8s_pods'));
    expect(at('k8s_workloads')).toBeLessThan(at('k8s_pods'));
    for (const { name } of tables) {
      const [row] = await query<{ template: number; clone: number }>(
        t.db,
        `select count(*) filter (where cluster_id = $1)::int as template,
                count(*) filter (where cluster_id = $2)::int as clone
           from ${name}`,
        [templateId, cloneId],
      );
      expect({ name, clone: row?.clone }).toEqual({
        name,
        clone: row?.template,
      });
    }
    const [pods] = await query<{ n: number }>(
      t.db,
      'select count(*)::int as n from k8s_pods where cluster_id = $1',
      [cloneId],
    );
    expect(pods?.n).toBe(200);
  });

  it('points each reference at the clone’s own rows, under fresh ids and uids', async () => {
    const [links] = await query<Record<string, number>>(
      t.db,
      `select count(*) filter (where n.cluster_id <> p.cluster_id)::int as foreign_nodes,
              count(*) filter (where w.cluster_id <> p.cluster_id)::int as foreign_workloads,
              count(*) filter (where ns.cluster_id <> p.cluster_id)::int as foreign_namespaces,
              count(p.node_id)::int as with_node,
              count(p.workload_id)::int as with_workload
         from k8s_pods p
         left join k8s_nodes n on n.id = p.node_id
         left join k8s_workloads w on w.id = p.workload_id
         left join k8s_namespaces ns on ns.id = p.namespace_id
        where p.cluster_id = $1`,
      [cloneId],
    );
    expect(links).toMatchObject({
      foreign_nodes: 0,
      foreign_workloads: 0,
      foreign_namespaces: 0,
    });
    expect(links?.with_node).toBeGreaterThan(0);
    expect(links?.with_workload).toBeGreaterThan(0);
    const [shared] = await query<{ ids: number; uids: number; names: number }>(
      t.db,
      `select count(*) filter (where c.id = s.id)::int as ids,
              count(*) filter (where c.uid = s.uid)::int as uids,
              count(*) filter (where c.name = s.name)::int as names
         from k8s_pods c join k8s_pods s
           on s.cluster_id = $2 and s.namespace = c.namespace and s.name = c.name
        where c.cluster_id = $1`,
      [cloneId, templateId],
    );
    expect(shared).toEqual({ ids: 0, uids: 0, names: 200 });
    // An event about a pod still names that pod's (new) uid.
    const [events] = await query<{ template: number; clone: number }>(
      t.db,
      `select count(*) filter (where e.cluster_id = $2)::int as template,
              count(*) filter (where e.cluster_id = $1)::int as clone
         from k8s_events e
         join k8s_pods p on p.cluster_id = e.cluster_id and p.uid = e.involved_uid`,
      [cloneId, templateId],
    );
    expect(events?.template).toBeGreaterThan(0);
    expect(events?.clone).toBe(events?.template);
  });

  it('gives the clone its own identity and the template’s rollups', async () => {
    const rows = await query<Record<string, unknown>>(
      t.db,
      'select * from clusters where id = any($1) order by name',
      [[templateId, cloneId]],
    );
    const [template, clone] = rows as [
      Record<string, unknown>,
      Record<string, unknown>,
    ];
    expect(clone).toMatchObject({
      name: 'acme-production-001',
      slug: 'acme-production-001',
    });
    for (const key of ['asset_id', 'agent_id', 'uid']) {
      expect(clone[key]).not.toEqual(template[key]);
    }
    const identity = [
      'id',
      'asset_id',
      'agent_id',
      'uid',
      'name',
      'slug',
      'display_name',
    ];
    const rest = (r: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(r).filter(([k]) => !identity.includes(k)),
      );
    expect(rest(clone)).toEqual(rest(template));
    expect(clone.pods_total).toBe(200);

    // The same read, but for when it ran, the ids and the name.
    const summary = (id: string) =>
      getClusterSummary(t.db, id).then(({ generated_at: _, ...s }) =>
        JSON.parse(
          JSON.stringify(s)
            .replaceAll(
              /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g,
              'ID',
            )
            .replaceAll(/acme-production-00\d/g, 'NAME'),
        ),
      );
    expect(await summary(cloneId)).toEqual(await summary(templateId));
  });
});
