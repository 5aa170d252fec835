/**
 * A database login per group role (shared/db/roles.ts), made the way the
 * migrate step makes them, under a prefix of this run's own: roles are
 * cluster-wide. `drop` removes them; drop the database first, its grants
 * name them.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../../shared/db/pool.ts';
import {
  ensureRolesAndGrants,
  GROUP_ROLES,
  type GroupRoleName,
} from '../../shared/db/roles.ts';

export interface FunctionLogin {
  username: string;
  password: string;
}

export interface FunctionLogins {
  /** Group role (unprefixed, as in GROUP_ROLES) → its login. */
  byGroupRole: Map<GroupRoleName, FunctionLogin>;
  drop(adminUrl: string): Promise<void>;
}

/** Creates the group roles, their grants on `owner`'s database, and a login each. */
export async function createFunctionLogins(owner: Db): Promise<FunctionLogins> {
  const prefix = `t${randomBytes(4).toString('hex')}_`;
  const byGroupRole = new Map<GroupRoleName, FunctionLogin>();
  for (const role of Object.values(GROUP_ROLES)) {
    byGroupRole.set(role, {
      username: `${prefix}${role}_login`,
      password: randomBytes(18).toString('base64url'),
    });
  }
  await ensureRolesAndGrants(
    owner,
    [...byGroupRole].map(([groupRole, login]) => ({ groupRole, ...login })),
    { rolePrefix: prefix },
  );
  return {
    byGroupRole,
    async drop(adminUrl) {
      const admin = new pg.Client({ connectionString: adminUrl });
      await admin.connect();
      try {
        const logins = [...byGroupRole.values()].map((l) => l.username);
        const groups = Object.values(GROUP_ROLES).map((r) => `${prefix}${r}`);
        for (const name of [...logins, ...groups]) {
          await admin.query(`drop role if exists ${pg.escapeIdentifier(name)}`);
        }
      } finally {
        await admin.end();
      }
    },
  };
}
