/**
 * The stored-rows read every sync starts with (listStoredRows): what it
 * returns, read back independently from the tables, and that the pods'
 * branch stays an index-only scan of their unique key (migration 0024).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execute, query, withTransaction } from '../../../shared/db/pool.ts';
import {
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  naturalKey,
} from '../../../shared/sync/kinds.ts';
import {
  listStoredRows,
  storedRowsStatement,
} from '../../../shared/sync/repo.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Heap Fetches'?: number;
  Plans?: PlanNode[];
}

function nodesOf(plan: PlanNode): PlanNode[] {
  return [plan, ...(plan.Plans ?? []).flatMap(nodesOf)];
}

describe('listStoredRows', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    const inv = generateInventory({
      seed: 7,
      agentId: randomUUID(),
      timestamp: '2026-06-15T12:00:00.123Z',
    });
    const result = await syncInventory(
      database.db,
      {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        agentId: inv.agent_id,
      },
      inv,
      { now: () => new Date('2026-06-15T12:30:00Z') },
    );
    clusterId = result.clusterId;
  });
  afterAll(() => database.drop());

  it("returns every stored row's id, key and digest, and a workload's facts", async () => {
    // Prepare
    const expected: unknown[] = [];
    for (const kind of KIND_ORDER) {
      const def = KINDS[kind] as KindDefinition;
      const rows = await query(
        database.db,
        `select * from ${def.table} where cluster_id = $1`,
        [clusterId],
      );
      for (const row of rows) {
        expected.push({
          kind,
          id: row.id,
          key: naturalKey(def, row),
          content_hash: row.content_hash,
          facts:
            kind === 'workloads'
              ? {
                  spec_facts_hash: row.spec_facts_hash,
                  spec_facts_at: row.spec_facts_at,
                  spec_facts_wire_hash: row.spec_facts_wire_hash,
                }
              : null,
        });
      }
    }

    // Act
    const stored = await withTransaction(database.db, (tx) =>
      listStoredRows(tx, clusterId, KIND_ORDER),
    );

    // Assess
    expect(new Set(stored.map((r) => r.kind))).toEqual(new Set(KIND_ORDER));
    const order = (a: { id: string }, b: { id: string }) =>
      a.id.localeCompare(b.id);
    expect([...stored].sort(order)).toEqual(
      (expected as { id: string }[]).sort(order),
    );
    const workload = stored.find((r) => r.kind === 'workloads');
    expect(workload?.facts?.spec_facts_at).toEqual(
      new Date('2026-06-15T12:00:00.123Z'),
    );
    expect(workload?.facts?.spec_facts_wire_hash).toEqual(expect.any(String));
  });

  it('reads only the kinds asked for, and nothing for none', async () => {
    // Act
    const [services, none] = await withTransaction(database.db, async (tx) => [
      await listStoredRows(tx, clusterId, ['services']),
      await listStoredRows(tx, clusterId, []),
    ]);

    // Assess
    expect(services.length).toBeGreaterThan(0);
    expect(services.every((r) => r.kind === 'services')).toBe(true);
    expect(none).toEqual([]);
  });

  it("reads the pods from their unique key alone, with no heap page once they're all visible", async () => {
    // Prepare
    await execute(database.db, 'vacuum (analyze) k8s_pods');

    // Act: the heap-reading plans are ruled out, so a pods branch that
    // read a column the index does not carry could only be an index scan.
    const plan = await withTransaction(database.db, async (tx) => {
      await execute(tx, 'set local enable_seqscan = off');
      await execute(tx, 'set local enable_bitmapscan = off');
      const rows = await query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
        tx,
        `explain (analyze, format json) ${storedRowsStatement(['pods'])}`,
        [clusterId],
      );
      return rows[0]?.['QUERY PLAN'][0]?.Plan as PlanNode;
    });

    // Assess
    const pods = nodesOf(plan).find((n) => n['Relation Name'] === 'k8s_pods');
    expect(pods).toMatchObject({
      'Node Type': 'Index Only Scan',
      'Index Name': 'k8s_pods_cluster_id_namespace_name_key',
      'Heap Fetches': 0,
    });
  });
});
