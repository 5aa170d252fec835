/**
 * The CMDB's hosts, which the sync links k8s nodes to (by hostname, else
 * IP, in the node's environment: shared/sync/repo.ts linkNodesToHosts):
 * the API's two reads (a scoped, PQL-filtered page; one host) and the
 * operator's writes (`npm run host`, the admin function). A host added or
 * removed is picked up by each cluster's next sync, which relinks every
 * node it carries; removing a host unlinks its nodes at once (FK set null).
 */
import { isIP } from 'node:net';
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { SqlParams } from '../db/params.ts';
import {
  type Db,
  type Queryable,
  query,
  queryMaybeOne,
  queryOne,
} from '../db/pool.ts';
import { NotFoundError, ValidationError } from '../errors.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
} from '../http/paging.ts';
import { isUuid } from '../patterns.ts';
import { matchingHosts } from '../pql/compile.ts';
import { parsePql } from '../pql/parse.ts';
import { findTenantIds } from '../tenancy/tenants.ts';
import * as z from '../zod.ts';

const hostNodeRecord = z.object({
  cluster_id: z.string(),
  cluster_name: z.string(),
  node_name: z.string(),
  status: z.nullable(z.string()),
});

export const hostRecord = z.object({
  id: z.string(),
  hostname: z.string(),
  ip_address: z.nullable(z.string()),
  os: z.nullable(z.string()),
  client_id: z.string(),
  environment_id: z.nullable(z.string()),
  nodes: z.array(hostNodeRecord),
});

export type HostRecord = z.infer<typeof hostRecord>;

/**
 * A host's columns and its linked nodes (any cluster: a node links only to
 * a host of its own environment, so the host's scope covers its clusters).
 */
const HOST_COLUMNS = `
  h.id, h.hostname, host(h.ip_address) as ip_address, h.os, h.client_id,
  h.environment_id,
  coalesce((
    select json_agg(json_build_object(
             'cluster_id', c.id, 'cluster_name', c.name,
             'node_name', n.name, 'status', n.status)
           order by c.name, c.id, n.name)
    from k8s_nodes n join clusters c on c.id = n.cluster_id
    where n.host_id = h.id), '[]') as nodes`;

/**
 * GET /api/v1/hosts: the hosts inside `scope` that `pql` matches (all when
 * absent), by hostname. The page's keys are found first, from the hosts'
 * own columns; their nodes are read for the page only.
 */
export async function listHosts(
  db: Queryable,
  scope: Scope,
  filter: { pql: string | undefined; paging: Paging },
): Promise<{ items: HostRecord[]; meta: PageMeta }> {
  const params = new SqlParams();
  const inScope = scopeCondition(scope, params, {
    client: 'h.client_id',
    environment: 'h.environment_id',
  });
  const { statement, fromPairs } = matchingHosts(
    filter.pql === undefined ? undefined : parsePql(filter.pql),
    params,
    inScope,
  );
  const countValues = [...params.values];
  const count = async () =>
    (
      await queryOne<{ total: number }>(
        db,
        `select count(*)::int as total from (${statement}) m`,
        countValues,
      )
    ).total;
  const limit = params.add(filter.paging.perPage);
  const offset = params.add(offsetOf(filter.paging));
  const page = `page as (
       select m.id, m.sort_name from m
       order by m.sort_name, m.id
       limit ${limit} offset ${offset})`;
  const pageHosts = `from page p join hosts h on h.id = p.id
     order by p.sort_name, p.id`;
  if (fromPairs) {
    // The pairs are at most the linked nodes: read once for the count and
    // the page (reading them twice was most of the request's cost).
    const rows = await query<HostRecord & { total: number }>(
      db,
      `with m as materialized (${statement}), ${page}
       select (select count(*)::int from m) as total, ${HOST_COLUMNS}
       ${pageHosts}`,
      params.values,
    );
    return {
      items: rows.map((row) => hostRecord.parse(row)),
      // A page past the end has no row to carry the count.
      meta: pageMeta(rows[0]?.total ?? (await count()), filter.paging),
    };
  }
  // The host's own columns: the count is its own statement, since a window
  // count over the page would make it read every match before its first
  // row, where the page walks the hostname index.
  const total = await count();
  const rows = await query<HostRecord>(
    db,
    `with m as (${statement}), ${page} select ${HOST_COLUMNS} ${pageHosts}`,
    params.values,
  );
  return {
    items: rows.map((row) => hostRecord.parse(row)),
    meta: pageMeta(total, filter.paging),
  };
}

const GET_HOST_SQL = `select ${HOST_COLUMNS} from hosts h where h.id = $1`;

/**
 * GET /api/v1/hosts/{hostID}: one host inside `scope`; 404 for an unknown
 * id, a malformed one, or a host outside the caller's environments.
 */
export async function getHost(
  db: Queryable,
  scope: Scope,
  hostId: string | undefined,
): Promise<HostRecord> {
  if (!isUuid(hostId)) throw new NotFoundError('host not found');
  const params = new SqlParams();
  params.add(hostId);
  const inScope = scopeCondition(scope, params, {
    client: 'h.client_id',
    environment: 'h.environment_id',
  });
  const row = await queryMaybeOne(
    db,
    `${GET_HOST_SQL} and ${inScope}`,
    params.values,
  );
  if (!row) throw new NotFoundError('host not found');
  return hostRecord.parse(row);
}

// ------------------------------------------------------------ operators

export interface HostListing {
  id: string;
  client: string;
  environment: string | null;
  hostname: string;
  ipAddress: string | null;
  os: string | null;
  linkedNodes: number;
}

const INSERT_HOST = `
  insert into hosts (client_id, environment_id, hostname, ip_address, os)
  values ($1, $2, $3, $4::inet, $5)
  returning id`;

const HOSTNAME = /^[A-Za-z0-9]([A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$/;

/**
 * Adds a host to a client's environment. Its nodes link on their cluster's
 * next sync (by hostname, else by IP).
 */
export async function addHost(
  db: Db,
  input: {
    clientSlug: string;
    envSlug: string;
    hostname: string;
    ip?: string | undefined;
    os?: string | undefined;
  },
): Promise<{ id: string }> {
  if (!HOSTNAME.test(input.hostname)) {
    throw new ValidationError(
      'hostname: must be a DNS name (letters, digits, dots and hyphens)',
    );
  }
  if (input.ip !== undefined && isIP(input.ip) === 0) {
    throw new ValidationError('ip: must be an IPv4 or IPv6 address');
  }
  if (input.os !== undefined && (input.os === '' || input.os.length > 200)) {
    throw new ValidationError('os: must be 1-200 characters');
  }
  const tenant = await findTenantIds(db, input.clientSlug, input.envSlug);
  const rows = await query<{ id: string }>(db, INSERT_HOST, [
    tenant.clientId,
    tenant.environmentId,
    input.hostname,
    input.ip ?? null,
    input.os ?? null,
  ]);
  return { id: (rows[0] as { id: string }).id };
}

const LIST_ALL_HOSTS = `
  select h.id, c.slug as client, e.slug as environment, h.hostname,
         host(h.ip_address) as ip_address, h.os,
         (select count(*)::int from k8s_nodes n where n.host_id = h.id) as linked_nodes
  from hosts h
  join clients c on c.id = h.client_id
  left join environments e on e.id = h.environment_id
  where $1::text is null or c.slug = $1
  order by c.slug, e.slug nulls first, lower(h.hostname), h.id`;

/** Every host (of one client), with how many nodes link to it. */
export async function listAllHosts(
  db: Db,
  clientSlug?: string,
): Promise<HostListing[]> {
  const rows = await query<{
    id: string;
    client: string;
    environment: string | null;
    hostname: string;
    ip_address: string | null;
    os: string | null;
    linked_nodes: number;
  }>(db, LIST_ALL_HOSTS, [clientSlug ?? null]);
  return rows.map((r) => ({
    id: r.id,
    client: r.client,
    environment: r.environment,
    hostname: r.hostname,
    ipAddress: r.ip_address,
    os: r.os,
    linkedNodes: r.linked_nodes,
  }));
}

const DELETE_HOST = 'delete from hosts where id = $1 returning id';

/** Removes a host; its nodes are unlinked (the FK sets them null). */
export async function removeHost(db: Db, id: string): Promise<{ id: string }> {
  if (!isUuid(id)) throw new ValidationError('id: must be a UUID');
  const row = await queryMaybeOne<{ id: string }>(db, DELETE_HOST, [id]);
  if (!row) throw new NotFoundError(`id: no host ${id}`);
  return { id };
}
