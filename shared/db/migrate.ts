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

/**
 * Other texts of a file that landed and were later put back as they first
 * were, by checksum: a database that applied one of them is not refused, as
 * the file that supersedes the text brings it to the same schema.
 *
 * - 0005_rollups.sql was edited after it landed (the rollup keeping every
 *   waiting reason, the not-ready workloads' index covering), and that text
 *   landed too. 0005 is back to its first text; 0010 makes both changes.
 */
const SUPERSEDED_TEXTS: Readonly<Record<string, readonly string[]>> = {
  '0005_rollups.sql': [
    '1945345b0f02acb2f71a2f4346b84dcfc8427c95e72fb07f35a46e522bda1b1a',
  ],
};

function isLandedText(file: MigrationFile, checksum: string): boolean {
  return (
    file.checksum === checksum ||
    (SUPERSEDED_TEXTS[file.name]?.includes(checksum) ?? false)
  );
}
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
      if (file && !isLandedText(file, checksum)) {
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
