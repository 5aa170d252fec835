/**
 * The prune (spec "Upsert-Then-Prune Sync Pattern", step 16) as PostgreSQL
 * sees it: row triggers on the 13 tables log each deleted row in order, so
 * the order is read from the database, not from the code's own list.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

/** The spec's prune order, children before parents, as it writes it. */
const SPEC_PRUNE_ORDER = [
  'k8s_endpoint_slices',
  'k8s_resource_quotas',
  'k8s_network_policies',
  'k8s_hpas',
  'k8s_jobs',
  'k8s_events',
  'k8s_pvcs',
  'k8s_ingresses',
  'k8s_services',
  'k8s_pods',
  'k8s_workloads',
  'k8s_namespaces',
  'k8s_nodes',
];

const EVERY_KIND_EMPTY = {
  nodes: [],
  namespaces: [],
  workloads: [],
  pods: [],
  services: [],
  ingresses: [],
  pvcs: [],
  events: [],
  jobs: [],
  hpas: [],
  network_policies: [],
  resource_quotas: [],
  endpoint_slices: [],
} satisfies Partial<Inventory>;

describe('the prune', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    await query(
      database.db,
      `create table prune_log (seq bigserial primary key, table_name text not null);
       create function log_prune() returns trigger language plpgsql as $$
       begin
         insert into prune_log (table_name) values (tg_table_name);
         return old;
       end $$;`,
    );
    for (const table of SPEC_PRUNE_ORDER) {
      await query(
        database.db,
        `create trigger log_prune after delete on ${table}
           for each row execute function log_prune()`,
      );
    }
  });
  afterAll(async () => {
    await database?.drop();
  });

  async function sync(agentId: string, inventory: Inventory, at: Date) {
    return syncInventory(
      database.db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      inventory,
      { now: () => at },
    );
  }

  const snapshot = (agentId: string, at: Date) =>
    generateInventory({
      seed: agentId,
      agentId,
      clusterName: `c-${agentId.slice(0, 8)}`,
      timestamp: at.toISOString(),
    });

  it("deletes every kind's unseen rows in the spec's order, children before parents", async () => {
    // Prepare: a cluster holding rows of all 13 kinds.
    const agentId = randomUUID();
    const first = new Date(Date.now() - 120_000);
    const second = new Date(first.getTime() + 60_000);
    const full = snapshot(agentId, first);
    await sync(agentId, full, first);
    await query(database.db, 'truncate prune_log');

    // Act: the next snapshot lists every kind, and none holds a row.
    await sync(
      agentId,
      { ...full, ...EVERY_KIND_EMPTY, timestamp: second.toISOString() },
      second,
    );

    // Assess: each table's first deletion, in order; no table deleted
    // from again after a later one started (a cascade would).
    const log = await query<{ table_name: string }>(
      database.db,
      'select table_name from prune_log order by seq',
    );
    const runs = log
      .map((row) => row.table_name)
      .filter((table, i, all) => table !== all[i - 1]);
    expect(runs).toEqual(SPEC_PRUNE_ORDER);
  });

  it('writes no change record for a workload the next snapshot no longer lists', async () => {
    // Prepare
    const agentId = randomUUID();
    const first = new Date(Date.now() - 120_000);
    const second = new Date(first.getTime() + 60_000);
    const full = snapshot(agentId, first);
    const { clusterId } = await sync(agentId, full, first);
    const [gone, changed, ...rest] = full.workloads ?? [];
    // Another workload's image changes in the same snapshot: that one is
    // recorded, so the recorder runs here and sees the deletion too.
    const facts = changed!.spec_facts!;
    const kept = [
      {
        ...changed!,
        spec_facts: {
          ...facts,
          containers: facts.containers.map((c, i) =>
            i === 0 ? { ...c, image: `${c.image}-next` } : c,
          ),
        },
      },
      ...rest,
    ];
    const changesBefore = await query<{ n: number }>(
      database.db,
      `select count(*)::int as n from change_events
        where details ->> 'cluster_id' = $1`,
      [clusterId],
    );

    // Act
    await sync(
      agentId,
      { ...full, workloads: kept, timestamp: second.toISOString() },
      second,
    );

    // Assess: the row is pruned, and no record says so.
    const stored = await query<{ name: string }>(
      database.db,
      `select name from k8s_workloads
        where cluster_id = $1 and kind = $2 and namespace = $3 and name = $4`,
      [clusterId, gone?.kind, gone?.namespace, gone?.name],
    );
    const recorded = await query<{ name: string; event_type: string }>(
      database.db,
      `select details ->> 'name' as name, event_type from change_events
        where details ->> 'cluster_id' = $1`,
      [clusterId],
    );
    expect(gone).toBeDefined();
    expect(stored).toEqual([]);
    expect(changesBefore).toEqual([{ n: 0 }]);
    expect(recorded).toEqual([
      { name: changed?.name, event_type: 'workload_changed' },
    ]);
  });
});
