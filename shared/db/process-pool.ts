/**
 * The database pool of this process (one per Lambda instance): created on
 * first use from the configuration (DATABASE_URL, or in AWS DATABASE_HOST
 * plus the Secrets Manager secret: shared/db/connect.ts, read once per cold
 * start), named by the function that uses it, so `pg_stat_activity` tells
 * the API's connections from the sync worker's, the bridge's, the sweeps'
 * and the admin function's. The local server and tests inject their own
 * pool with `setDb`.
 */
import { getConfig } from '../config.ts';
import { resolveDatabaseUrl } from './connect.ts';
import { createPool, type Db } from './pool.ts';

export interface ProcessPoolOptions {
  /** The function's name as PostgreSQL shows it (application_name). */
  applicationName: string;
  /** Connections; DATABASE_POOL_MAX by default. */
  max?: number;
}

let current: Promise<Db> | undefined;

/**
 * The process's pool, created on the first call with that call's options; a
 * failed attempt is retried on the next call.
 */
export function getDb(options: ProcessPoolOptions): Promise<Db> {
  current ??= connect(options).catch((error: unknown) => {
    current = undefined;
    throw error;
  });
  return current;
}

/** Uses `db` for every later call (the local server, tests). */
export function setDb(db: Db | undefined): void {
  current = db === undefined ? undefined : Promise.resolve(db);
}

async function connect(options: ProcessPoolOptions): Promise<Db> {
  const config = getConfig();
  return createPool({
    connectionString: await resolveDatabaseUrl(config),
    max: options.max ?? config.DATABASE_POOL_MAX,
    applicationName: options.applicationName,
  });
}
