/**
 * The application logins outside AWS (the local stack, the tests): the same
 * group roles and grants the migrate step makes after a deploy
 * (./roles.ts), and one login per group role, so every function connects
 * with the login it has in AWS, never the owner.
 *
 * There are no secrets to hold the passwords: each is derived from the
 * owner's connection (HMAC of the server, user and password it names, and
 * the login's name), so every process that can connect as the owner makes
 * the same ones, and two stacks or test files on one server never reset
 * each other's. A password only keeps one login from being mistaken for
 * another; whoever has the owner's URL has everything anyway.
 */
import { createHmac } from 'node:crypto';
import pg from 'pg';
import type { Db } from './pool.ts';
import {
  APPLICATION_LOGINS,
  ensureRolesAndGrants,
  FUNCTION_LOGINS,
  type FunctionKind,
  type GroupKind,
  type LoginCredentials,
} from './roles.ts';

/** Each group role's login, prefixed as `rolePrefix` says (tests). */
export function localLogins(
  ownerUrl: string,
  rolePrefix = '',
): Record<GroupKind, LoginCredentials> {
  const owner = new URL(ownerUrl);
  // The server and the owner, not the database: one login, one password.
  const key = `${owner.host}\n${owner.username}\n${owner.password}`;
  const logins = {} as Record<GroupKind, LoginCredentials>;
  for (const [kind, { username, role }] of Object.entries(APPLICATION_LOGINS)) {
    const name = `${rolePrefix}${username}`;
    logins[kind as GroupKind] = {
      groupRole: role,
      username: name,
      password: createHmac('sha256', key).update(name).digest('base64url'),
    };
  }
  return logins;
}

/** `ownerUrl` with `login`'s credentials instead of the owner's. */
export function urlAs(ownerUrl: string, login: LoginCredentials): string {
  const url = new URL(ownerUrl);
  url.username = login.username;
  url.password = login.password;
  return url.toString();
}

/**
 * Applies the grants to the database `ownerDb` is connected to and makes
 * sure each login exists and can connect as a member of its group role;
 * returns each function's connection string. Logins that already work are
 * left alone, since two processes changing one role at once fail.
 */
export async function ensureLocalLogins(
  ownerDb: Db,
  ownerUrl: string,
  options: { rolePrefix?: string } = {},
): Promise<Record<FunctionKind, string>> {
  const rolePrefix = options.rolePrefix ?? '';
  const logins = localLogins(ownerUrl, rolePrefix);
  const missing: LoginCredentials[] = [];
  for (const login of Object.values(logins)) {
    if (
      !(await works(urlAs(ownerUrl, login), `${rolePrefix}${login.groupRole}`))
    )
      missing.push(login);
  }
  await ensureRolesAndGrants(ownerDb, missing, { rolePrefix });
  const urls = {} as Record<FunctionKind, string>;
  for (const [fn, kind] of Object.entries(FUNCTION_LOGINS)) {
    urls[fn as FunctionKind] = urlAs(ownerUrl, logins[kind]);
  }
  return urls;
}

/** Whether `url` connects, as a member of `group`. */
async function works(url: string, group: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ member: boolean }>(
      `select case when exists (select 1 from pg_roles where rolname = $1)
              then pg_has_role(current_user, $1, 'member') else false end as member`,
      [group],
    );
    return rows[0]?.member === true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}
