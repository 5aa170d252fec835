/**
 * A caller's grants, read from user_grants by email (case-insensitively, as
 * the table's unique index compares them).
 */
import { type Queryable, query } from '../db/pool.ts';
import { isRole, type Role } from './roles.ts';

export interface Grant {
  role: Role;
  clientId: string;
  /** null: the grant covers the whole client. */
  environmentId: string | null;
}

const LIST_GRANTS_SQL = `
  select role, client_id, environment_id
    from user_grants
   where lower(email) = lower($1)`;

/**
 * The grants of the email in $1 as one JSON array (empty for none or a
 * null email), for a statement that reads them beside something else.
 */
export const GRANTS_JSON_SQL = `
  (select coalesce(json_agg(json_build_object(
            'role', role, 'client_id', client_id,
            'environment_id', environment_id)), '[]'::json)
     from user_grants
    where lower(email) = lower($1))`;

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
  const rows = await query<GrantRow & Record<string, unknown>>(
    db,
    LIST_GRANTS_SQL,
    [email],
  );
  return toGrants(rows);
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
