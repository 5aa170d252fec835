import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../shared/db/migrate.ts';
import { query } from '../../../shared/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('migrate', () => {
  let database: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    await cp('migrations', dir, { recursive: true });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies nothing twice when two runners start at once', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id int primary key);',
    );

    // Act
    const results = await Promise.all([
      migrate(database.url, dir),
      migrate(database.url, dir),
    ]);

    // Assess
    const appliedNames = results.flatMap((r) => r.applied);
    expect(appliedNames).toEqual(['9001_probe.sql']);
    const rows = await query(
      database.db,
      `select name from schema_migrations where name = '9001_probe.sql'`,
    );
    expect(rows).toHaveLength(1);
  });

  it('refuses to run when a landed migration was edited', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id bigint primary key);',
    );

    // Act
    const attempt = migrate(database.url, dir);

    // Assess
    await expect(attempt).rejects.toThrow(/9001_probe\.sql was changed/);
  });

  it('rolls a failing migration back whole', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id int primary key);',
    );
    await writeFile(
      join(dir, '9002_broken.sql'),
      'create table half_done (id int); select no_such_function();',
    );

    // Act
    const attempt = migrate(database.url, dir);

    // Assess
    await expect(attempt).rejects.toThrow(/9002_broken\.sql failed/);
    const rows = await query(
      database.db,
      `select to_regclass('half_done') as table_name`,
    );
    expect(rows[0]?.table_name).toBeNull();
  });
});
