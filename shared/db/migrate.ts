/**
 * The migration runner, used by `npm run migrate`, the local stack, the tests
 * and the deploy-time trigger function. Forward-only: files in `dir` named
 * NNNN_slug.sql are applied in order, each in its own transaction (unless its
 * first line says `-- migrate: no-transaction`). Safe when two runners start
 * at once: they serialize on an advisory lock, and the second finds nothing
 * left to do. A landed file whose text changed is refused, never re-run.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pg from 'pg';

export class MigrationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'MigrationError';
  }
}

export interface MigrationFile {
  name: string;
  sql: string;
  checksum: string;
}

const FILE_PATTERN = /^\d{4}_[a-z0-9_]+\.sql$/;
// Any constant works; it only has to be the same for every runner.
const LOCK_KEY = 727_001;

export async function readMigrations(dir: string): Promise<MigrationFile[]> {
  const names = (await readdir(dir)).filter((n) => FILE_PATTERN.test(n)).sort();
  return Promise.all(
    names.map(async (name) => {
      const sql = await readFile(join(dir, name), 'utf8');
      const checksum = createHash('sha256').update(sql).digest('hex');
      return { name, sql, checksum };
    }),
  );
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

/** Applies every pending migration in `dir` to the database at `connectionString`. */
export async function migrate(
  connectionString: string,
  dir: string,
): Promise<MigrateResult> {
  const files = await readMigrations(dir);
  const client = new pg.Client({
    connectionString,
    application_name: 'migrate',
  });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [LOCK_KEY]);
    await client.query(`create table if not exists schema_migrations (
      name text primary key,
      checksum text not null,
      applied_at timestamptz not null default now()
    )`);
    const { rows } = await client.query<{ name: string; checksum: string }>(
      'select name, checksum from schema_migrations',
    );
    const landed = new Map(rows.map((r) => [r.name, r.checksum]));
    for (const [name, checksum] of landed) {
      const file = files.find((f) => f.name === name);
      if (file && file.checksum !== checksum) {
        throw new MigrationError(
          `migration ${name} was changed after it was applied; landed migrations are never edited, add a new one`,
        );
      }
    }
    const applied: string[] = [];
    for (const file of files) {
      if (landed.has(file.name)) continue;
      const transactional = !file.sql.startsWith('-- migrate: no-transaction');
      try {
        if (transactional) await client.query('begin');
        await client.query(file.sql);
        await client.query(
          'insert into schema_migrations (name, checksum) values ($1, $2)',
          [file.name, file.checksum],
        );
        if (transactional) await client.query('commit');
      } catch (error) {
        if (transactional) await client.query('rollback').catch(() => {});
        throw new MigrationError(
          `migration ${file.name} failed: ${(error as Error).message}`,
          {
            cause: error,
          },
        );
      }
      applied.push(file.name);
    }
    return { applied, alreadyApplied: landed.size };
  } finally {
    await client
      .query('select pg_advisory_unlock($1)', [LOCK_KEY])
      .catch(() => {});
    await client.end();
  }
}
