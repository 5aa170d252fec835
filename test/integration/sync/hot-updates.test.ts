/**
 * Updates that touch no indexed column are HOT on the kinds that change at
 * every resync (migration 0032's fillfactor): a node's usage, moved on every
 * node of a cluster, and a namespace's counts, rewritten on most of them,
 * leave each new row version on its page and add no index entry. Counted
 * from the table's statistics before and after each update.
 *
 * The sync itself leaves a dead version of each of these rows on its page
 * (the pods' rollups update the row the same transaction inserted). The
 * next update reclaims that room only once no transaction older than the
 * sync is running anywhere on the server: a snapshot's horizon spans every
 * database, so a test file running beside this one holds it back. A resync
 * comes minutes later; the test waits for that horizon instead.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

describe('HOT updates of the kinds that move at every resync', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    const agentId = randomUUID();
    // Medium: 50 nodes and 20 namespaces, enough to fill pages that a
    // packed table would have left no room on.
    const inventory = generateInventory({
      size: 'medium',
      seed: 31,
      agentId,
      timestamp: '2026-06-15T12:00:00Z',
    });
    const result = await syncInventory(
      database.db,
      {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        agentId,
      },
      inventory,
    );
    clusterId = result.clusterId;
    await waitForTransactionsOlderThanNow(database);
  });
  afterAll(() => database.drop());

  /**
   * Waits until every transaction that began before this call has ended,
   * server-wide: until the oldest running transaction id is newer than one
   * taken now.
   */
  async function waitForTransactionsOlderThanNow(db: TestDatabase) {
    const { rows } = await db.db.query<{ xid: string }>(
      'select pg_current_xact_id()::text as xid',
    );
    const marker = rows[0]?.xid;
    await eventually(
      `every transaction older than ${marker} to end`,
      async () => {
        const { rows: done } = await db.db.query<{ ended: boolean }>(
          'select pg_snapshot_xmin(pg_current_snapshot()) > $1::xid8 as ended',
          [marker],
        );
        return done[0]?.ended;
      },
      60_000,
    );
  }

  /**
   * Runs `sql` on the cluster's rows, committed; returns the rows it
   * updated and how many updates, and HOT ones, the table's statistics
   * gained. Each count is read after this backend's pending statistics are
   * flushed: pg_stat_xact_user_tables would be simpler, but PostgreSQL 15
   * mixes into it the pending counts of the backend's earlier transactions
   * (the sync's, on a pooled connection).
   */
  async function updateCounts(table: string, sql: string) {
    const client = await database.db.connect();
    const read = async () => {
      await client.query('select pg_stat_force_next_flush()');
      await client.query('select pg_stat_clear_snapshot()');
      const { rows } = await client.query<{ upd: string; hot: string }>(
        `select n_tup_upd as upd, n_tup_hot_upd as hot
           from pg_stat_user_tables where relname = $1`,
        [table],
      );
      return { updates: Number(rows[0]?.upd), hot: Number(rows[0]?.hot) };
    };
    try {
      const before = await read();
      const { rowCount } = await client.query(sql, [clusterId]);
      const after = await read();
      return {
        rows: rowCount ?? 0,
        updates: after.updates - before.updates,
        hot: after.hot - before.hot,
      };
    } finally {
      client.release();
    }
  }

  it("writes every node's new usage as a HOT update", async () => {
    const counts = await updateCounts(
      'k8s_nodes',
      `update k8s_nodes
          set usage_cpu_millicores = coalesce(usage_cpu_millicores, 0) + 1,
              usage_memory_bytes = coalesce(usage_memory_bytes, 0) + 1,
              content_hash = content_hash || '+', updated_at = now()
        where cluster_id = $1`,
    );
    expect(counts).toEqual({ rows: 50, updates: 50, hot: 50 });
  });

  it("writes every namespace's new counts as a HOT update", async () => {
    const counts = await updateCounts(
      'k8s_namespaces',
      `update k8s_namespaces
          set pod_count = coalesce(pod_count, 0) + 1, updated_at = now()
        where cluster_id = $1`,
    );
    expect(counts.rows).toBeGreaterThanOrEqual(20);
    expect(counts.hot).toBe(counts.rows);
    expect(counts.updates).toBe(counts.rows);
  });
});
