/**
 * Each function's production login, for tests: a handler under test connects
 * as the login of the group role it gets in AWS (FUNCTION_LOGINS in
 * shared/db/roles.ts), never as the owner, so a grant missing from roles.ts
 * fails here first.
 *
 * The global setup (./global-setup.ts) creates the run's group roles and
 * logins with `ensureRolesAndGrants` on the migrated template, exactly as the
 * migrate step does after a deploy; every test database is a copy of the
 * template and so carries the grants. Roles are cluster-wide, so the run's
 * group roles and logins carry a prefix with its process id (`kinv<pid>_`),
 * dropped at teardown or, after a killed run, by the next run's setup.
 */
import type pg from 'pg';
import { inject } from 'vitest';
import { localLogins, urlAs } from '../../shared/db/local-logins.ts';
import { createPool, type Db } from '../../shared/db/pool.ts';
import {
  FUNCTION_LOGINS,
  type FunctionKind,
  type GroupKind,
  type LoginCredentials,
} from '../../shared/db/roles.ts';

export type { FunctionKind };

/** The run's prefix and each group role's login (provided by the setup). */
export interface RunLogins {
  rolePrefix: string;
  logins: Record<GroupKind, LoginCredentials>;
}

/** A run's role names: `kinv<pid>_...`. */
export const RUN_ROLE = /^kinv(\d+)_/;

/** The logins of the run of process `pid` on the server of `adminUrl`. */
export function runLogins(pid: number, adminUrl: string): RunLogins {
  const rolePrefix = `kinv${pid}_`;
  return { rolePrefix, logins: localLogins(adminUrl, rolePrefix) };
}

/** Drops the roles named with `prefix`, logins before their groups. */
export async function dropRunRoles(
  admin: pg.Client,
  prefix: string,
): Promise<void> {
  const { rows } = await admin.query<{ rolname: string; rolcanlogin: boolean }>(
    'select rolname, rolcanlogin from pg_roles where starts_with(rolname, $1) order by rolcanlogin desc',
    [prefix],
  );
  for (const { rolname } of rows) {
    await admin.query(`drop role if exists "${rolname}"`);
  }
}

/** The login `fn` connects with in AWS, as this run created it. */
export function credentialsFor(fn: FunctionKind): LoginCredentials {
  return inject('pgRunLogins').logins[FUNCTION_LOGINS[fn]];
}

/** `databaseUrl` (the owner's) with `fn`'s login instead. */
export function loginUrl(fn: FunctionKind, databaseUrl: string): string {
  return urlAs(databaseUrl, credentialsFor(fn));
}

export interface LoginDb {
  /** The login's name, as `current_user` shows it. */
  username: string;
  url: string;
  db: Db;
}

/**
 * A pool on the test database `database` (its owner's URL) as `fn`'s login;
 * end it with `db.end()` (or let the file's teardown drop the database).
 */
export function loginFor(
  fn: FunctionKind,
  database: { url: string },
  options: { max?: number } = {},
): LoginDb {
  const url = loginUrl(fn, database.url);
  return {
    username: credentialsFor(fn).username,
    url,
    db: createPool({
      connectionString: url,
      max: options.max ?? 4,
      applicationName: `test-${fn}`,
    }),
  };
}
