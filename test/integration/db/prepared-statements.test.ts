/**
 * The sync worker's statements are prepared once per connection: the
 * server parses and plans them on first use and later runs only bind them
 * (a steady resync runs the same dozen statements every time). A prepared
 * statement is named by its text, so a name never meets two texts, and a
 * refusal through one is translated like any other.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  execute,
  prepared,
  query,
  withTransaction,
} from '../../../shared/db/pool.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('prepared statements', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
    await execute(
      database.db,
      'create table prepared_probe (id int primary key, n int not null)',
    );
  });
  afterAll(() => database.drop());

  it('is parsed once per connection and then only run', async () => {
    // Arrange
    const insert = prepared(
      'insert into prepared_probe (id, n) values ($1, $2) returning n',
    );

    // Act
    const held = await withTransaction(database.db, async (tx) => {
      const first = await query<{ n: number }>(tx, insert, [1, 10]);
      const second = await query<{ n: number }>(tx, insert, [2, 20]);
      const statements = await query<{ name: string; calls: number }>(
        tx,
        'select name, generic_plans + custom_plans as calls from pg_prepared_statements where name = $1',
        [insert.name],
      );
      return { first, second, statements };
    });

    // Assert
    expect(held.first).toEqual([{ n: 10 }]);
    expect(held.second).toEqual([{ n: 20 }]);
    expect(held.statements).toEqual([{ name: insert.name, calls: 2 }]);
  });

  it('names one text by one name, and two texts by two', () => {
    // Arrange
    const text = 'select n from prepared_probe where id = $1';

    // Act
    const once = prepared(text);
    const again = prepared(`${text}`);
    const other = prepared(`${text} and n > 0`);

    // Assert
    expect(again).toBe(once);
    expect(other.name).not.toBe(once.name);
    expect(once.name).toMatch(/^s_[A-Za-z0-9_-]{24}$/);
  });

  it('translates a refusal as an unprepared statement does', async () => {
    // Arrange
    const insert = prepared(
      'insert into prepared_probe (id, n) values ($1, $2)',
    );
    await execute(database.db, insert, [3, 30]);

    // Act
    const duplicate = execute(database.db, insert, [3, 31]);

    // Assert
    await expect(duplicate).rejects.toBeInstanceOf(ConflictError);
  });
});
