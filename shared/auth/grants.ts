/**
 * A caller's grants, read from user_grants by email (case-insensitively, as
 * the table's unique index compares them).
 */
import { type Queryable, queryOne } from '../db/pool.ts';
import { isRole, type Role } from './roles.ts';

export interface Grant {
  role: Role;
  clientId: string;
  /** null: the grant covers the whole client. */
  environmentId: string | null;
}

/**
 * The grants of the email in parameter `email` (`$n`) as one JSON array
 * (empty for none or a null email): read alone (listGrants) or with what
 * a request reads first (readCaller, shared/auth/caller.ts).
 */
export function grantsJsonSql(email: string): string {
  return `
  (select coalesce(json_agg(json_build_object(
            'role', role, 'client_id', client_id,
            'environment_id', environment_id)), '[]'::json)
     from user_grants
    where lower(email) = lower(${email}))`;
}

export interface GrantRow {
  role: string;
  client_id: string;
  environment_id: string | null;
}

/** Every grant of `email`; none for a caller without an email. */
export async function listGrants(
  db: Queryable,
  email: string | undefined,
): Promise<Grant[]> {
  if (!email) return [];
  const row = await queryOne<{ grants: GrantRow[] }>(
    db,
    `select ${grantsJsonSql('$1')} as grants`,
    [email],
  );
  return toGrants(row.grants);
}

/** Stored grant rows as grants. */
export function toGrants(rows: readonly GrantRow[]): Grant[] {
  const grants: Grant[] = [];
  for (const row of rows) {
    // The check constraint makes this always true; a role dropped from code
    // but still stored grants nothing rather than failing every request.
    if (!isRole(row.role)) continue;
    grants.push({
      role: row.role,
      clientId: row.client_id,
      environmentId: row.environment_id,
    });
  }
  return grants;
}
