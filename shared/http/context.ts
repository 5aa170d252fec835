/**
 * The database pool the handlers share: one per process (per Lambda
 * instance), created on first use from the configuration (DATABASE_URL, or
 * in AWS DATABASE_HOST plus the Secrets Manager secret: shared/db/connect.ts,
 * read once per cold start). The local server and tests inject their own
 * pool with `setDb`.
 */
import { type Config, getConfig } from '../config.ts';
import { resolveDatabaseUrl } from '../db/connect.ts';
import { createPool, type Db } from '../db/pool.ts';

let current: Promise<Db> | undefined;

/** The shared pool, created from the configuration on first call. */
export function getDb(): Promise<Db> {
  current ??= connect(getConfig()).catch((error: unknown) => {
    current = undefined;
    throw error;
  });
  return current;
}

/** Uses `db` for every later request (the local server, tests). */
export function setDb(db: Db | undefined): void {
  current = db === undefined ? undefined : Promise.resolve(db);
}

async function connect(config: Config): Promise<Db> {
  return createPool({
    connectionString: await resolveDatabaseUrl(config),
    max: config.DATABASE_POOL_MAX,
    applicationName: 'k8s-inventory-api',
  });
}
