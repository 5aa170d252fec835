/**
 * The database pool of this process (one per Lambda instance): created on
 * first use from the configuration (DATABASE_URL, or in AWS DATABASE_HOST
 * plus the Secrets Manager secret: shared/db/connect.ts, read once per cold
 * start), named by the function that uses it, so `pg_stat_activity` tells
 * the API's connections from the sync worker's, the bridge's, the sweeps'
 * and the admin function's. The local server and tests inject their own
 * pool with `setDb`: where several functions share one process (the local
 * stack, a test), each gets the pool of its own login (`login`, by
 * FUNCTION_LOGINS), as each has its own process and login in AWS.
 */
import { getConfig } from '../config.ts';
import { resolveDatabaseUrl } from './connect.ts';
import { createPool, type Db } from './pool.ts';
import type { FunctionKind } from './roles.ts';

export interface ProcessPoolOptions {
  /** The function's name as PostgreSQL shows it (application_name). */
  applicationName: string;
  /**
   * The function, whose login the pool must be (shared/db/roles.ts
   * FUNCTION_LOGINS): in AWS the configuration already names it; a process
   * hosting several functions gives each its own with `setDb(db, login)`.
   */
  login: FunctionKind;
  /** Connections; DATABASE_POOL_MAX by default. */
  max?: number;
}

let current: Promise<Db> | undefined;
const byLogin = new Map<FunctionKind, Db>();

/**
 * The process's pool, created on the first call with that call's options; a
 * failed attempt is retried on the next call.
 */
export function getDb(options: ProcessPoolOptions): Promise<Db> {
  const own = byLogin.get(options.login);
  if (own) return Promise.resolve(own);
  current ??= connect(options).catch((error: unknown) => {
    current = undefined;
    throw error;
  });
  return current;
}

/**
 * Uses `db` for every later call of `login`'s function, or without `login`
 * of every function given no pool of its own (the local server, tests).
 * `setDb(undefined)` forgets every pool given.
 */
export function setDb(db: Db | undefined, login?: FunctionKind): void {
  if (login !== undefined) {
    if (db === undefined) byLogin.delete(login);
    else byLogin.set(login, db);
    return;
  }
  if (db === undefined) byLogin.clear();
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
