/**
 * One way to run SQL: a refusal raised by PostgreSQL is recognised whatever
 * the call style wrapped it in (query()'s ConflictError, a transaction's
 * rethrow, the sync's refusal), so a message that can never apply is
 * refused and recorded, never retried into the dead-letter queue.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refusedDataOf, sqlStateOf } from '../../../shared/db/errors.ts';
import {
  execute,
  query,
  queryMaybeOne,
  queryOne,
  withTransaction,
} from '../../../shared/db/pool.ts';
import { ConflictError, ValidationError } from '../../../shared/errors.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

const DUPLICATE =
  'insert into refusal_probe (id, n) values (1, 1) returning id';

describe('a refusal through each SQL call style', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await execute(
      database.db,
      `create table refusal_probe (
         id int primary key,
         n int constraint refusal_probe_n_positive check (n > 0)
       )`,
    );
    await execute(database.db, 'insert into refusal_probe values (1, 1)');
  });
  afterAll(() => database.drop());

  const styles: [string, () => Promise<unknown>][] = [
    ['query', () => query(database.db, DUPLICATE)],
    ['queryOne', () => queryOne(database.db, DUPLICATE)],
    ['queryMaybeOne', () => queryMaybeOne(database.db, DUPLICATE)],
    ['execute', () => execute(database.db, DUPLICATE)],
    [
      'query inside withTransaction',
      () => withTransaction(database.db, (tx) => query(tx, DUPLICATE)),
    ],
    [
      'execute inside withTransaction',
      () => withTransaction(database.db, (tx) => execute(tx, DUPLICATE)),
    ],
    [
      "the driver's own call inside withTransaction",
      () => withTransaction(database.db, (tx) => tx.query(DUPLICATE)),
    ],
  ];

  it.each(styles)(
    'recognises a unique violation through %s',
    async (_, run) => {
      // Act
      const error = await run().catch((e: unknown) => e);

      // Assert
      expect(error).toBeInstanceOf(ConflictError);
      expect(sqlStateOf(error)).toBe('23505');
      expect(refusedDataOf(error)).toEqual({
        problem: 'two rows with the same key',
        where: 'constraint refusal_probe_pkey',
      });
    },
  );

  it('recognises a refusal wrapped once more by the caller', async () => {
    // Prepare: what the sync does with a refused upsert.
    const refused = await query(database.db, DUPLICATE).catch(
      (e: unknown) => new Error('nodes: refused', { cause: e }),
    );

    // Act
    const error = await withTransaction(database.db, async () => {
      throw refused;
    }).catch((e: unknown) => e);

    // Assert: passed through unchanged, still classified.
    expect(error).toBe(refused);
    expect(sqlStateOf(error)).toBe('23505');
  });

  it('recognises a check violation and names its constraint', async () => {
    // Act
    const error = await execute(
      database.db,
      'insert into refusal_probe values (2, -1)',
    ).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(ValidationError);
    expect(sqlStateOf(error)).toBe('23514');
    expect(refusedDataOf(error)?.where).toBe(
      'constraint refusal_probe_n_positive',
    );
  });

  it('does not take a transient failure for a refusal', async () => {
    // Act
    const error = await withTransaction(
      database.db,
      (tx) => query(tx, 'select pg_sleep(1)'),
      { timeoutMs: 50 },
    ).catch((e: unknown) => e);

    // Assert
    expect(error).toBeInstanceOf(Error);
    expect(refusedDataOf(error)).toBeUndefined();
  });
});
