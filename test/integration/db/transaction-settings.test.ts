/**
 * withTransaction's settings: sent with BEGIN in one round trip, quoted as
 * literals (a simple query takes no parameters), local to the transaction.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOne, withTransaction } from '../../../shared/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe("a transaction's settings", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.drop());

  const current = (db: Parameters<typeof queryOne>[0]) =>
    queryOne<{ timeout: string; lock: string; name: string; mem: string }>(
      db,
      `select current_setting('statement_timeout') as timeout,
              current_setting('lock_timeout') as lock,
              current_setting('application_name') as name,
              current_setting('work_mem') as mem`,
    );

  it('hold inside the transaction, a quote in a value included, and end with it', async () => {
    // Act
    const { inside, sessionPid } = await withTransaction(
      database.db,
      async (tx) => ({
        inside: await current(tx),
        sessionPid: (
          await queryOne<{ pid: number }>(tx, 'select pg_backend_pid() as pid')
        ).pid,
      }),
      {
        timeoutMs: 1234.7,
        settings: { application_name: "o'brien; select 1", work_mem: '8MB' },
      },
    );
    const after = await current(database.db);

    // Assess
    expect(inside).toEqual({
      timeout: '1234ms',
      lock: '1234ms',
      name: "o'brien; select 1",
      mem: '8MB',
    });
    expect(sessionPid).toBeGreaterThan(0);
    expect(after.timeout).not.toBe('1234ms');
    expect(after.name).not.toBe("o'brien; select 1");
  });

  it('bound a statement that runs longer than the timeout', async () => {
    // Act
    const error = await withTransaction(
      database.db,
      (tx) => queryOne(tx, 'select pg_sleep(2)'),
      { timeoutMs: 100 },
    ).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(Error);
  });

  it('open a transaction without settings too (one transaction id for its statements)', async () => {
    // Prepare
    const xid = (tx: Parameters<typeof queryOne>[0]) =>
      queryOne<{ id: string }>(tx, 'select pg_current_xact_id()::text as id');

    // Act
    const [first, second] = await withTransaction(database.db, async (tx) => [
      await xid(tx),
      await xid(tx),
    ]);
    const outside = [await xid(database.db), await xid(database.db)];

    // Assess
    expect(first).toEqual(second);
    expect(outside[0]).not.toEqual(outside[1]);
  });
});
