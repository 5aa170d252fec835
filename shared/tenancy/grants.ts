/**
 * Grants a role to a user on a client, or on one environment of it (what
 * `npm run grant` and the admin function's `grant` command run).
 * Idempotent: granting what is already granted changes nothing and returns
 * the existing grant. The user is the `email` claim of their tokens.
 */
import { isRole, ROLES, type Role } from '../auth/roles.ts';
import { type Queryable, queryMaybeOne } from '../db/pool.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { findTenantBySlugs } from './tenants.ts';

export interface GrantInput {
  email: string;
  role: string;
  clientSlug: string;
  /** Narrows the grant to one environment; the whole client without it. */
  envSlug?: string | undefined;
}

export interface GrantResult {
  grantId: string;
  email: string;
  role: Role;
  clientId: string;
  /** null: the grant covers the whole client. */
  environmentId: string | null;
  /** false when the same grant already existed. */
  created: boolean;
}

const INSERT_GRANT = `
  insert into user_grants (email, role, client_id, environment_id)
  values ($1, $2, $3, $4)
  on conflict do nothing
  returning id`;

// The unique index compares lower(email) and a null environment as one.
const FIND_GRANT = `
  select id from user_grants
   where lower(email) = lower($1) and role = $2 and client_id = $3
     and environment_id is not distinct from $4`;

/** Grants `role` on the client (or environment); returns the grant's ids. */
export async function grantRole(
  db: Queryable,
  input: GrantInput,
): Promise<GrantResult> {
  const email = input.email.trim();
  if (email === '' || /\s/.test(email) || !email.includes('@')) {
    throw new ValidationError(
      `email ${JSON.stringify(input.email)} is not an email address`,
    );
  }
  if (!isRole(input.role)) {
    throw new ValidationError(
      `unknown role ${input.role}: one of ${ROLES.join(', ')}`,
    );
  }
  const role = input.role;
  const target = await findTenantBySlugs(
    db,
    input.clientSlug,
    input.envSlug ?? null,
  );
  if (!target)
    throw new NotFoundError(`no client with slug ${input.clientSlug}`);
  if (input.envSlug !== undefined && target.environment_id === null) {
    throw new NotFoundError(
      `client ${input.clientSlug} has no environment ${input.envSlug}`,
    );
  }
  const environmentId =
    input.envSlug === undefined ? null : target.environment_id;
  const values = [email, role, target.client_id, environmentId];
  const inserted = await queryMaybeOne<{ id: string }>(
    db,
    INSERT_GRANT,
    values,
  );
  const grant =
    inserted ?? (await queryMaybeOne<{ id: string }>(db, FIND_GRANT, values));
  if (!grant) {
    // Removed between the two statements: nothing to report as granted.
    throw new Error(`the grant of ${role} to ${email} vanished; run it again`);
  }
  return {
    grantId: grant.id,
    email,
    role,
    clientId: target.client_id,
    environmentId,
    created: inserted !== undefined,
  };
}
