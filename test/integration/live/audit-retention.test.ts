import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/sweeps/event-retention.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { expireAudit, insertAudit } from '../../../shared/live/audit.ts';
import { insertAuditedCluster } from '../../helpers/api-fixtures.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { captureStdout } from '../sweeps/support.ts';

const DAY = 86_400_000;

describe('live-read audit retention', () => {
  let database: TestDatabase;
  let entry: Parameters<typeof insertAudit>[1];

  beforeAll(async () => {
    database = await createTestDatabase();
    entry = await insertAuditedCluster(database.db);
  });
  afterAll(async () => {
    setDb(undefined);
    await database.drop();
  });

  async function auditAged(days: number[]) {
    await query(database.db, 'delete from live_read_audit');
    for (const age of days) {
      const id = await insertAudit(
        database.db,
        {
          ...entry,
          requestId: randomUUID(),
        },
        { outcome: 'ok', status: 200, durationMs: 5, bytes: 10 },
      );
      await query(
        database.db,
        'update live_read_audit set at = $2 where id = $1',
        [id, new Date(Date.now() - age * DAY)],
      );
    }
  }

  async function ages(): Promise<number[]> {
    const rows = await query<{ days: number }>(
      database.db,
      `select round(extract(epoch from now() - at) / 86400)::int as days
         from live_read_audit order by at`,
    );
    return rows.map((r) => r.days);
  }

  it('deletes the rows older than the retention period and keeps the rest', async () => {
    // Prepare
    await auditAged([1, 30, 399, 401, 800]);

    // Act
    const deleted = await expireAudit(database.db, 400);

    // Assess
    expect(deleted).toBe(2);
    expect(await ages()).toEqual([399, 30, 1]);
  });

  it('runs in the hourly retention sweep with AUDIT_RETENTION_DAYS (default 400)', async () => {
    // Prepare
    setDb(database.as('sweeps').db, 'sweeps');
    await auditAged([2, 500]);
    const out = captureStdout();

    // Act
    let result: Awaited<ReturnType<typeof handler>>;
    try {
      result = await handler({}, lambdaContext('event-retention'));
    } finally {
      out.restore();
    }

    // Assess
    expect(result.auditDeleted).toBe(1);
    expect(await ages()).toEqual([2]);
  });

  it("keeps a cluster's audit rows when the cluster row is deleted", async () => {
    // Prepare
    await auditAged([1]);

    // Act
    await query(database.db, 'delete from clusters where id = $1', [
      entry.clusterId,
    ]);

    // Assess
    const rows = await query<{
      cluster_id: string | null;
      cluster_name: string;
    }>(database.db, 'select cluster_id, cluster_name from live_read_audit');
    expect(rows).toEqual([{ cluster_id: null, cluster_name: 'c1' }]);
  });
});
