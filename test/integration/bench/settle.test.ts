/**
 * The steady benches' start (bench/disk.ts settleAfterFirstSync): after
 * the first syncs, every table is vacuumed and analyzed and a checkpoint
 * is taken, so the window's WAL holds the resyncs' own writes, not
 * autovacuum's first pass over freshly loaded pages.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  diskSample,
  lsnBytes,
  settleAfterFirstSync,
} from '../../../bench/disk.ts';
import { query } from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant } from '../../helpers/inventory-db.ts';

describe('settleAfterFirstSync', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    const tenant = await createTenant(database.db);
    const agentId = randomUUID();
    await syncInventory(
      database.db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      generateInventory({ agentId, timestamp: '2026-06-15T12:00:00Z' }),
    );
  });
  afterAll(() => database.drop());

  it('vacuums and analyzes the synced tables, then takes a checkpoint', async () => {
    const before = await diskSample(database.db);
    await settleAfterFirstSync(database.db);
    const [pods] = await query<{ vacuumed: boolean; analyzed: boolean }>(
      database.db,
      `select last_vacuum is not null as vacuumed,
              last_analyze is not null as analyzed
         from pg_stat_user_tables where relname = 'k8s_pods'`,
    );
    expect(pods).toEqual({ vacuumed: true, analyzed: true });
    const [checkpoint] = await query<{ redo: string }>(
      database.db,
      'select redo_lsn::text as redo from pg_control_checkpoint()',
    );
    expect(lsnBytes(checkpoint?.redo ?? '0/0')).toBeGreaterThanOrEqual(
      lsnBytes(before.lsn),
    );
  });
});
