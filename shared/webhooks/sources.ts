/**
 * Webhook sources: one per sender (an Argo CD or an Alertmanager) of one
 * client, optionally pinned to one environment (none: client-wide). The
 * secret is 32 random bytes, shown once when the source is made; only its
 * SHA-256 is stored, and a presented secret is checked against it in
 * constant time. Managed by `npm run webhook` and the admin function.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { type Db, query, queryMaybeOne, queryOne } from '../db/pool.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import { isUuid } from '../patterns.ts';
import { findTenantBySlugs } from '../tenancy/tenants.ts';

export const WEBHOOK_KINDS = ['argocd', 'alertmanager'] as const;
export type WebhookKind = (typeof WEBHOOK_KINDS)[number];

export interface WebhookSource {
  id: string;
  clientId: string;
  /** Null: a client-wide source. */
  environmentId: string | null;
  kind: WebhookKind;
}

export interface WebhookSourceListing extends WebhookSource {
  client: string;
  environment: string | null;
  createdAt: Date;
  disabledAt: Date | null;
}

export interface NewWebhookSource {
  id: string;
  /** Shown once; never stored. */
  secret: string;
}

function sha256(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

const INSERT_SOURCE = `
  insert into webhook_sources (client_id, environment_id, kind, secret_sha256)
  values ($1, $2, $3, $4)
  returning id`;

/** Creates a source; the secret is returned here and nowhere else. */
export async function addWebhookSource(
  db: Db,
  input: { clientSlug: string; envSlug?: string | undefined; kind: string },
): Promise<NewWebhookSource> {
  if (!(WEBHOOK_KINDS as readonly string[]).includes(input.kind)) {
    throw new ValidationError(
      `kind: must be one of ${WEBHOOK_KINDS.join(', ')}`,
    );
  }
  const tenant = await findTenantBySlugs(
    db,
    input.clientSlug,
    input.envSlug ?? null,
  );
  if (!tenant) throw new NotFoundError(`client: no client ${input.clientSlug}`);
  if (input.envSlug !== undefined && tenant.environment_id === null) {
    throw new NotFoundError(
      `environment: client ${input.clientSlug} has no environment ${input.envSlug}`,
    );
  }
  const secret = randomBytes(32).toString('base64url');
  const row = await queryOne<{ id: string }>(db, INSERT_SOURCE, [
    tenant.client_id,
    input.envSlug === undefined ? null : tenant.environment_id,
    input.kind,
    sha256(secret),
  ]);
  return { id: row.id, secret };
}

const LIST_SOURCES = `
  select s.id, s.client_id, s.environment_id, s.kind, s.created_at, s.disabled_at,
         c.slug as client, e.slug as environment
  from webhook_sources s
  join clients c on c.id = s.client_id
  left join environments e on e.id = s.environment_id
  where $1::text is null or c.slug = $1
  order by c.slug, s.created_at, s.id`;

/** Every source (of one client), never a secret or its hash. */
export async function listWebhookSources(
  db: Db,
  clientSlug?: string,
): Promise<WebhookSourceListing[]> {
  const rows = await query<{
    id: string;
    client_id: string;
    environment_id: string | null;
    kind: WebhookKind;
    created_at: Date;
    disabled_at: Date | null;
    client: string;
    environment: string | null;
  }>(db, LIST_SOURCES, [clientSlug ?? null]);
  return rows.map((r) => ({
    id: r.id,
    clientId: r.client_id,
    environmentId: r.environment_id,
    kind: r.kind,
    client: r.client,
    environment: r.environment,
    createdAt: r.created_at,
    disabledAt: r.disabled_at,
  }));
}

const DISABLE_SOURCE = `
  update webhook_sources set disabled_at = coalesce(disabled_at, now())
  where id = $1
  returning disabled_at`;

/** Disables a source for good (idempotent); its rows stay. */
export async function disableWebhookSource(
  db: Db,
  id: string,
): Promise<{ id: string; disabledAt: Date }> {
  if (!isUuid(id)) throw new ValidationError('id: must be a UUID');
  const row = await queryMaybeOne<{ disabled_at: Date }>(db, DISABLE_SOURCE, [
    id,
  ]);
  if (!row) throw new NotFoundError(`id: no webhook source ${id}`);
  return { id, disabledAt: row.disabled_at };
}

const FIND_SOURCE = `
  select id, client_id, environment_id, kind, secret_sha256
  from webhook_sources
  where id = $1 and disabled_at is null`;

/**
 * Compared against when the id is unknown, so that an unknown source costs
 * the same work as a wrong secret.
 */
const NO_SOURCE_HASH = sha256(randomBytes(32).toString('base64url'));

/**
 * The enabled source `id` whose secret is `secret`, else undefined: unknown
 * id, disabled source, missing or wrong secret all look the same to the
 * caller. The hashes are compared in constant time.
 */
export async function authenticateWebhookSource(
  db: Db,
  id: string | undefined,
  secret: string | undefined,
): Promise<WebhookSource | undefined> {
  const row = isUuid(id)
    ? await queryMaybeOne<{
        id: string;
        client_id: string;
        environment_id: string | null;
        kind: WebhookKind;
        secret_sha256: Buffer;
      }>(db, FIND_SOURCE, [id])
    : undefined;
  const presented = sha256(secret ?? '');
  const stored = row?.secret_sha256 ?? NO_SOURCE_HASH;
  const matches = timingSafeEqual(presented, stored);
  if (!row || !matches || secret === undefined || secret === '') {
    return undefined;
  }
  return {
    id: row.id,
    clientId: row.client_id,
    environmentId: row.environment_id,
    kind: row.kind,
  };
}
