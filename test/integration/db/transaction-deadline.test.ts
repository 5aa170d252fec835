/**
 * withTransaction's deadline ends the transaction for the work too: a
 * statement the abandoned work sends after the deadline must not follow the
 * ROLLBACK and run, and commit, on its own. So does the work's end: a chain
 * it left running is refused once its promise settles, failed or not. The sync runs in such a
 * transaction; a change record or a cluster's digests committed without the
 * rows they describe would be recorded twice or never written.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  queryOne,
  TransactionEndedError,
  TransactionTimeoutError,
  withTransaction,
} from '../../../shared/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe("a transaction's deadline", () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await database.db.query('create table deadline_marks (n int)');
  });
  afterAll(() => database.drop());

  const marks = async () =>
    (
      await queryOne<{ n: number }>(
        database.db,
        'select count(*)::int as n from deadline_marks',
      )
    ).n;

  it('lets no statement the work sends after it reach the server', async () => {
    // Prepare: each statement is shorter than the bound (the server's
    // statement_timeout never fires); the deadline passes during the second,
    // so the third is sent after the deadline, once the second has answered.
    let third: unknown;
    const work = async (
      tx: Parameters<Parameters<typeof withTransaction>[1]>[0],
    ) => {
      await tx.query('select pg_sleep(0.5)');
      await tx.query('select pg_sleep(0.8)');
      try {
        await tx.query('insert into deadline_marks values (1)');
      } catch (error) {
        third = error;
        throw error;
      }
    };

    // Act
    const error = await withTransaction(database.db, work, {
      timeoutMs: 1_000,
    }).catch((e: unknown) => e);
    // Time for a statement queued behind the ROLLBACK to have run.
    await sleep(500);

    // Assess
    expect(await marks()).toBe(0);
    expect(error).toBeInstanceOf(TransactionTimeoutError);
    expect(third).toBeInstanceOf(TransactionEndedError);
  });

  it('refuses a statement on the client once the transaction committed', async () => {
    // Prepare: a reference to the client kept past the transaction's end.
    let kept: Parameters<Parameters<typeof withTransaction>[1]>[0] | undefined;

    // Act
    await withTransaction(database.db, async (tx) => {
      kept = tx;
      await tx.query('insert into deadline_marks values (2)');
    });

    // Assess: the client is back in the pool; the kept reference must not
    // slip a statement into whatever runs on it next.
    expect(() => kept?.query('insert into deadline_marks values (3)')).toThrow(
      TransactionEndedError,
    );
    expect(await marks()).toBe(1);
  });

  it('refuses a statement of the work sent while its ROLLBACK runs', async () => {
    // Prepare: one of two side-by-side chains fails; the other sends its
    // statement after the failure, while the ROLLBACK is on the wire. It
    // would queue behind the ROLLBACK and run, and commit, on its own.
    const before = await marks();
    let late: unknown;
    const work = async (
      tx: Parameters<Parameters<typeof withTransaction>[1]>[0],
    ) => {
      const failing = tx.query('select 1/0');
      // Sent on the next turn of the event loop: the failure has reached
      // withTransaction, which has sent its ROLLBACK.
      void failing
        .catch(() => new Promise((resolve) => setImmediate(resolve)))
        .then(() => tx.query('insert into deadline_marks values (4)'))
        .catch((error: unknown) => {
          late = error;
        });
      await failing;
    };

    // Act
    const error = await withTransaction(database.db, work).catch(
      (e: unknown) => e,
    );
    // Time for the straggler to have been sent, and run if it was.
    await sleep(200);

    // Assess
    expect(error).toBeInstanceOf(Error);
    expect(late).toBeInstanceOf(TransactionEndedError);
    expect(await marks()).toBe(before);
  });

  it('refuses a statement of the work sent while its COMMIT runs', async () => {
    // Prepare: the work resolves, leaving a chain that sends a statement
    // once the transaction is committing.
    const before = await marks();
    let late: unknown;
    let straggler: Promise<void> | undefined;

    // Act
    await withTransaction(database.db, async (tx) => {
      await tx.query('select 1');
      // Sent on the next turn of the event loop, once COMMIT is sent.
      straggler = new Promise((resolve) => setImmediate(resolve))
        .then(() => tx.query('insert into deadline_marks values (5)'))
        .then(
          () => undefined,
          (error: unknown) => {
            late = error;
          },
        );
    });
    await straggler;

    // Assess
    expect(late).toBeInstanceOf(TransactionEndedError);
    expect(await marks()).toBe(before);
  });
});
