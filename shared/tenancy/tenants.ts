/**
 * Clients and environments (tenants) for the local stack and operators:
 * created on demand, idempotently. Slugs follow the NATS subject's rule
 * (DNS-1123 labels), since that is where agents name them.
 */
import {
  type Db,
  type Queryable,
  queryMaybeOne,
  queryOne,
  withTransaction,
} from '../db/pool.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { DNS_1123_LABEL } from '../patterns.ts';

export interface TenantInput {
  clientSlug: string;
  envSlug: string;
  /** Display names; the slug when not given. */
  clientName?: string;
  envName?: string;
}

export interface Tenant {
  clientId: string;
  environmentId: string;
  clientSlug: string;
  envSlug: string;
  clientCreated: boolean;
  environmentCreated: boolean;
}

const INSERT_CLIENT = `
  insert into clients (slug, name) values ($1, $2)
  on conflict (slug) do nothing
  returning id`;
const FIND_CLIENT = `select id from clients where slug = $1`;
const INSERT_ENVIRONMENT = `
  insert into environments (client_id, slug, name) values ($1, $2, $3)
  on conflict (client_id, slug) do nothing
  returning id`;
const FIND_ENVIRONMENT = `
  select id from environments where client_id = $1 and slug = $2`;

/** Creates the client and environment when missing; returns their ids. */
export async function ensureTenant(
  db: Db,
  input: TenantInput,
): Promise<Tenant> {
  for (const [what, slug] of [
    ['client', input.clientSlug],
    ['environment', input.envSlug],
  ] as const) {
    if (!DNS_1123_LABEL.test(slug)) {
      throw new ValidationError(
        `${what} slug ${JSON.stringify(slug)} is not a DNS-1123 label (lowercase letters, digits and '-', 1-63 characters)`,
      );
    }
  }
  return withTransaction(db, async (tx) => {
    const inserted = await queryMaybeOne<{ id: string }>(tx, INSERT_CLIENT, [
      input.clientSlug,
      input.clientName ?? input.clientSlug,
    ]);
    const client =
      inserted ??
      (await queryOne<{ id: string }>(tx, FIND_CLIENT, [input.clientSlug]));
    const insertedEnv = await queryMaybeOne<{ id: string }>(
      tx,
      INSERT_ENVIRONMENT,
      [client.id, input.envSlug, input.envName ?? input.envSlug],
    );
    const environment =
      insertedEnv ??
      (await queryOne<{ id: string }>(tx, FIND_ENVIRONMENT, [
        client.id,
        input.envSlug,
      ]));
    return {
      clientId: client.id,
      environmentId: environment.id,
      clientSlug: input.clientSlug,
      envSlug: input.envSlug,
      clientCreated: inserted !== undefined,
      environmentCreated: insertedEnv !== undefined,
    };
  });
}

export interface TenantIds {
  client_id: string;
  /** null: no environment was asked for, or the client has none of that slug. */
  environment_id: string | null;
}

/**
 * The one tenant-by-slug statement ($1 the client's slug, $2 the
 * environment's): grants and webhook sources read it through
 * findTenantBySlugs; the sync runs it within its cluster lock's statement
 * (shared/sync/repo.ts), one round trip for both.
 */
export const TENANT_BY_SLUGS = `
  select c.id as client_id, e.id as environment_id
    from clients c
    left join environments e on e.client_id = c.id and e.slug = $2
   where c.slug = $1`;

/**
 * The client of `clientSlug` and its environment of `envSlug` (null when
 * not asked or not there); undefined when no client has that slug.
 */
export function findTenantBySlugs(
  db: Queryable,
  clientSlug: string,
  envSlug: string | null,
): Promise<TenantIds | undefined> {
  return queryMaybeOne<TenantIds & Record<string, unknown>>(
    db,
    TENANT_BY_SLUGS,
    [clientSlug, envSlug],
  );
}

/**
 * The ids of an existing client and environment, for the operator
 * commands that attach something to them: a NotFoundError naming the
 * field when either is missing.
 */
export async function findTenantIds(
  db: Queryable,
  clientSlug: string,
  envSlug: string,
): Promise<{ clientId: string; environmentId: string }> {
  const row = await findTenantBySlugs(db, clientSlug, envSlug);
  if (!row) throw new NotFoundError(`client: no client ${clientSlug}`);
  if (row.environment_id === null) {
    throw new NotFoundError(
      `environment: client ${clientSlug} has no environment ${envSlug}`,
    );
  }
  return { clientId: row.client_id, environmentId: row.environment_id };
}
