/**
 * `npm run migrate`: applies migrations/ to DATABASE_URL, else to the local
 * stack's database (created when missing).
 */
import { getConfig } from '../shared/config.ts';
import { ensureDatabase } from '../shared/db/admin.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { migrate } from '../shared/db/migrate.ts';
import { findMigrationsDir } from '../shared/db/migrations-dir.ts';

const url = localDatabaseUrl(getConfig());
const target = new URL(url);
const where = `${target.hostname}:${target.port || 5432}${target.pathname}`;
try {
  if (await ensureDatabase(url)) console.log(`created database ${where}`);
  const dir = findMigrationsDir([new URL('../migrations', import.meta.url)]);
  const result = await migrate(url, dir);
  for (const name of result.applied) console.log(`applied ${name}`);
  console.log(
    `${where}: ${result.applied.length} applied, ${result.alreadyApplied} already there`,
  );
} catch (error) {
  const message = error instanceof Error ? error.message : String(error);
  console.error(`migrate failed on ${where}: ${message}`);
  if ((error as { code?: string }).code === 'ECONNREFUSED') {
    console.error(
      'is the database up? Start the local stack (npm start) or set DATABASE_URL.',
    );
  }
  process.exitCode = 1;
}
