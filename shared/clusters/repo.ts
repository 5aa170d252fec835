/**
 * Cluster rows: the full record (Get Cluster) and the scoped, paged list
 * (List Clusters and its client- and environment-scoped forms).
 */
import type { Scope } from '../auth/access.ts';
import { scopeCondition } from '../auth/scope-sql.ts';
import { isoTimestamp, jsonObject } from '../db/json-sql.ts';
import { SqlParams } from '../db/params.ts';
import { type Queryable, query } from '../db/pool.ts';
import {
  offsetOf,
  type PageMeta,
  type Paging,
  pageMeta,
} from '../http/paging.ts';
import { JsonText } from '../http/response.ts';
import { containsPattern } from '../http/search.ts';
import {
  type ClusterHealthCounts,
  HEALTH_COUNTS_JSON_FIELDS,
} from './capacity.ts';

/** Get Cluster's record: metadata, cloud context, agent and counts. */
export interface ClusterRecord {
  id: string;
  asset_id: string;
  client_id: string;
  environment_id: string;
  agent_id: string;
  name: string;
  display_name: string | null;
  slug: string;
  uid: string | null;
  version: string | null;
  platform: string | null;
  distribution: string | null;
  api_server_url: string | null;
  cluster_cidr: string | null;
  service_cidr: string | null;
  dns_domain: string | null;
  cloud_provider: string | null;
  cloud_region: string | null;
  cloud_account_id: string | null;
  status: string;
  agent_status: string;
  agent_version: string | null;
  node_count: number;
  namespace_count: number;
  workload_count: number;
  last_seen_at: Date | null;
  collection: unknown;
  created_at: Date;
  updated_at: Date;
  [column: string]: unknown;
}

/** The columns of a ClusterRecord, as a select list of `clusters`. */
export const CLUSTER_RECORD_COLUMNS = `id, asset_id, client_id, environment_id,
  agent_id, name, display_name, slug, uid, version, platform, distribution,
  api_server_url, cluster_cidr, service_cidr, dns_domain, cloud_provider,
  cloud_region, cloud_account_id, status, agent_status, agent_version,
  node_count, namespace_count, workload_count, last_seen_at, collection,
  created_at, updated_at`;

/** One item of the clusters list, as the response carries it. */
export interface ClusterListItem {
  id: string;
  asset_id: string;
  client_id: string;
  environment_id: string;
  name: string;
  display_name: string | null;
  slug: string;
  version: string | null;
  platform: string | null;
  status: string;
  agent_status: string;
  node_count: number;
  namespace_count: number;
  workload_count: number;
  /** RFC 3339. */
  last_seen_at: string | null;
}

/** With include=capacity. */
export type ClusterListItemWithCounts = ClusterListItem & ClusterHealthCounts;

export interface ClusterListFilter {
  clientId?: string | undefined;
  environmentId?: string | undefined;
  status?: string | undefined;
  /** Case-insensitive substring of the name, matched literally. */
  search?: string | undefined;
}

/** A clusters row `c` as its list item's JSON fields, in order. */
const LIST_ITEM_JSON_FIELDS: ReadonlyArray<
  readonly [key: keyof ClusterListItem, sql: string]
> = [
  ['id', 'c.id'],
  ['asset_id', 'c.asset_id'],
  ['client_id', 'c.client_id'],
  ['environment_id', 'c.environment_id'],
  ['name', 'c.name'],
  ['display_name', 'c.display_name'],
  ['slug', 'c.slug'],
  ['version', 'c.version'],
  ['platform', 'c.platform'],
  ['status', 'c.status'],
  ['agent_status', 'c.agent_status'],
  ['node_count', 'c.node_count'],
  ['namespace_count', 'c.namespace_count'],
  ['workload_count', 'c.workload_count'],
  ['last_seen_at', isoTimestamp('c.last_seen_at')],
];

const LIST_ITEM_JSON = jsonObject(LIST_ITEM_JSON_FIELDS);
const LIST_ITEM_WITH_COUNTS_JSON = jsonObject([
  ...LIST_ITEM_JSON_FIELDS,
  ...HEALTH_COUNTS_JSON_FIELDS,
]);

/**
 * The clusters inside `scope` matching every filter (each narrows, none
 * widens), ordered by name, one page of them, and the total. With
 * `healthCounts`, each item also carries its capacity block and health
 * counts, read by the same statement for the page's clusters only.
 */
export async function listClusters(
  db: Queryable,
  scope: Scope,
  filters: readonly ClusterListFilter[],
  paging: Paging,
  options: { healthCounts?: boolean } = {},
): Promise<{
  items: JsonText<ClusterListItem[] | ClusterListItemWithCounts[]>;
  meta: PageMeta;
}> {
  const params = new SqlParams();
  const where = [
    scopeCondition(scope, params, {
      client: 'c.client_id',
      environment: 'c.environment_id',
    }),
  ];
  for (const filter of filters) {
    if (filter.clientId !== undefined) {
      where.push(`c.client_id = ${params.add(filter.clientId)}`);
    }
    if (filter.environmentId !== undefined) {
      where.push(`c.environment_id = ${params.add(filter.environmentId)}`);
    }
    if (filter.status !== undefined) {
      where.push(`c.status = ${params.add(filter.status)}`);
    }
    if (filter.search !== undefined) {
      where.push(
        `c.name ilike ${params.add(containsPattern(filter.search))} escape '\\'`,
      );
    }
  }
  const condition = where.join(' and ');
  const limit = params.add(paging.perPage);
  const offset = params.add(offsetOf(paging));
  const item = options.healthCounts
    ? LIST_ITEM_WITH_COUNTS_JSON
    : LIST_ITEM_JSON;
  // The page's keys first, with the total: an index-only scan of the
  // clusters' names in the list's order (0031) holds every column the scope
  // and filters read, so neither the wide rows nor a sort of the names is
  // needed. Then the page's rows by id, each item rendered by PostgreSQL
  // (the health counts' per-cluster warning count too runs for the page
  // only). The lateral subquery's limit keeps that a primary-key lookup per
  // key: joined plainly, the planner hashes the keys and reads every
  // cluster's row again.
  const rows = await query<{ item: string; total: number }>(
    db,
    `with keys as (
       select c.id, lower(c.name) as sort_name, count(*) over () as total
         from clusters c
        where ${condition}
        order by sort_name, c.id
        limit ${limit} offset ${offset})
     select ${item}::text as item, k.total
       from keys k
      cross join lateral (
        select * from clusters c where c.id = k.id limit 1) c
      order by k.sort_name, k.id`,
    params.values,
  );
  let total = rows[0]?.total;
  if (total === undefined) {
    // A page past the end has no row to carry the window count.
    const counted = await query<{ total: number }>(
      db,
      `select count(*) as total from clusters c where ${condition}`,
      params.values.slice(0, -2),
    );
    total = counted[0]?.total ?? 0;
  }
  return {
    items: JsonText.array(rows.map((row) => row.item)),
    meta: pageMeta(total, paging),
  };
}
