/**
 * The deploy-time database step the migrate function runs: wait for the
 * database to accept a connection (a new RDS Proxy target takes minutes to
 * become available), apply the migrations, then, when the application
 * logins are given, create the roles and grants (./roles.ts). Every part is
 * idempotent, so a retried deploy simply runs it again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { type MigrateResult, migrate } from './migrate.ts';
import { createPool, type Db, query } from './pool.ts';
import {
  ensureRolesAndGrants,
  type LoginCredentials,
  type RolesResult,
} from './roles.ts';

export interface ConnectRetryOptions {
  /** Give up once this much time has passed since the first attempt. */
  totalMs?: number;
  /** The first wait; each later one doubles, up to `maxDelayMs`. */
  firstDelayMs?: number;
  maxDelayMs?: number;
}

export interface RetryInfo {
  attempt: number;
  delayMs: number;
  error: string;
}

export class DatabaseUnreachableError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseUnreachableError';
  }
}

/**
 * Tries `select 1` until it succeeds or `totalMs` (3 minutes by default)
 * has passed, waiting longer after each failure. Any error is retried: a
 * proxy whose target is still registering may refuse, time out or reset.
 * Returns the number of attempts.
 */
export async function waitForDatabase(
  db: Db,
  options: ConnectRetryOptions = {},
  onRetry?: (info: RetryInfo) => void,
): Promise<number> {
  const totalMs = options.totalMs ?? 180_000;
  const maxDelayMs = options.maxDelayMs ?? 15_000;
  let delayMs = options.firstDelayMs ?? 1_000;
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      await query(db, 'select 1');
      return attempt;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      const elapsed = Date.now() - started;
      if (elapsed + delayMs > totalMs) {
        throw new DatabaseUnreachableError(
          `database not reachable after ${attempt} attempts in ${Math.round(elapsed / 1000)} s: ${reason}`,
          { cause: error },
        );
      }
      onRetry?.({ attempt, delayMs, error: reason });
      await sleep(delayMs);
      delayMs = Math.min(delayMs * 2, maxDelayMs);
    }
  }
}

export interface DeployDatabaseOptions {
  url: string;
  migrationsDir: string;
  /** The application logins; without them no role or grant is touched. */
  logins?: readonly LoginCredentials[];
  connect?: ConnectRetryOptions;
  onRetry?: (info: RetryInfo) => void;
  /** Tests only: roles are cluster-wide (see RolesOptions). */
  rolePrefix?: string;
}

export interface DeployDatabaseResult extends MigrateResult {
  connectAttempts: number;
  /** Usernames and group roles, never a password. */
  logins: RolesResult['logins'];
}

/** Waits for the database, migrates, then applies the roles and grants. */
export async function deployDatabase(
  options: DeployDatabaseOptions,
): Promise<DeployDatabaseResult> {
  const db = createPool({
    connectionString: options.url,
    max: 1,
    applicationName: 'migrate',
  });
  try {
    const connectAttempts = await waitForDatabase(
      db,
      options.connect,
      options.onRetry,
    );
    const migrated = await migrate(options.url, options.migrationsDir);
    const roles =
      options.logins === undefined
        ? undefined
        : await ensureRolesAndGrants(
            db,
            options.logins,
            options.rolePrefix === undefined
              ? {}
              : { rolePrefix: options.rolePrefix },
          );
    return { ...migrated, connectAttempts, logins: roles?.logins ?? [] };
  } finally {
    await db.end();
  }
}
