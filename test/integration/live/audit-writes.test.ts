/**
 * The audit row's two writes on one connection: the completion relaxes its
 * own commit only (synchronous_commit off for its transaction), so the
 * connection's next statements, whoever runs them, still wait for the disk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { finishAudit, insertAudit } from '../../../shared/live/audit.ts';
import { insertAuditedCluster } from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('live-read audit writes', () => {
  let database: TestDatabase;
  let entry: Parameters<typeof insertAudit>[1];

  beforeAll(async () => {
    database = await createTestDatabase();
    entry = await insertAuditedCluster(database.db);
  });
  afterAll(async () => {
    await database.drop();
  });

  it('completes the row and leaves the connection committing synchronously', async () => {
    // Prepare
    const client = await database.db.connect();
    try {
      const id = await insertAudit(client, entry);

      // Act
      await finishAudit(client, id, {
        outcome: 'ok',
        status: 200,
        durationMs: 12,
        bytes: 345,
      });

      // Assess
      const [row] = await query(
        client,
        'select outcome, status, duration_ms, bytes from live_read_audit where id = $1',
        [id],
      );
      expect(row).toEqual({
        outcome: 'ok',
        status: 200,
        duration_ms: 12,
        bytes: 345,
      });
      const [setting] = await query(client, 'show synchronous_commit');
      expect(setting).toEqual({ synchronous_commit: 'on' });
    } finally {
      client.release();
    }
  });

  it('refuses to complete a row twice (503 audit_unavailable)', async () => {
    // Prepare
    const id = await insertAudit(database.db, entry);
    const outcome = { outcome: 'ok', status: 200, durationMs: 1, bytes: 1 };
    await finishAudit(database.db, id, outcome);

    // Act
    const again = finishAudit(database.db, id, outcome);

    // Assess
    await expect(again).rejects.toMatchObject({
      status: 503,
      code: 'audit_unavailable',
    });
  });
});
