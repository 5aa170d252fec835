/**
 * Inventory rows for the list tests, written with plain SQL (no sync): a
 * tenant with clusters, and rows of any k8s_* table with defaults for the
 * columns a test does not care about.
 */
import { randomUUID } from 'node:crypto';
import { type Queryable, query, queryOne } from '../../../shared/db/pool.ts';
import { refreshRollups } from '../../../shared/sync/repo.ts';

export type InventoryTable =
  | 'k8s_nodes'
  | 'k8s_namespaces'
  | 'k8s_workloads'
  | 'k8s_pods'
  | 'k8s_services'
  | 'k8s_ingresses'
  | 'k8s_pvcs'
  | 'k8s_events'
  | 'k8s_jobs'
  | 'k8s_hpas'
  | 'k8s_network_policies'
  | 'k8s_resource_quotas'
  | 'k8s_endpoint_slices';

/** Columns stored as text[]; every other array or object is jsonb. */
const TEXT_ARRAY_COLUMNS = new Set([
  'roles',
  'cluster_ips',
  'external_ips',
  'load_balancer_ingress',
  'load_balancer',
  'access_modes',
  'policy_types',
  'scopes',
]);
const COLUMN_NAME = /^[a-z_][a-z0-9_]*$/;

export type RowValues = Record<string, unknown>;

/** The dotted-quad cluster IP as a number, as the sync stores it. */
export function ipv4Number(ip: unknown): number | null {
  if (typeof ip !== 'string') return null;
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(ip);
  if (!match) return null;
  const parts = match.slice(1).map(Number);
  if (parts.some((part) => part > 255)) return null;
  return parts.reduce((sum, part) => sum * 256 + part, 0);
}

function encode(column: string, value: unknown): unknown {
  if (value === null || value === undefined || value instanceof Date) {
    return value ?? null;
  }
  if (typeof value === 'object' && !TEXT_ARRAY_COLUMNS.has(column)) {
    return JSON.stringify(value);
  }
  return value;
}

/**
 * Inserts rows into one table for a cluster, then refreshes the figures the
 * sync keeps beside them (node, namespace and cluster rollups), as a sync
 * would; returns their ids in order.
 */
export async function insertRows(
  db: Queryable,
  table: InventoryTable,
  clusterId: string,
  rows: readonly RowValues[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const row of rows) {
    const values: RowValues = {
      id: randomUUID(),
      cluster_id: clusterId,
      content_hash: 'test',
      ...row,
    };
    if (table === 'k8s_services' && !('cluster_ip_v4' in row)) {
      values.cluster_ip_v4 = ipv4Number(row.cluster_ip);
    }
    const columns = Object.keys(values);
    for (const column of columns) {
      if (!COLUMN_NAME.test(column)) throw new Error(`bad column ${column}`);
    }
    const placeholders = columns.map((_, i) => `$${i + 1}`).join(', ');
    await query(
      db,
      `insert into ${table} (${columns.join(', ')}) values (${placeholders})`,
      columns.map((column) => encode(column, values[column])),
    );
    ids.push(String(values.id));
  }
  await refreshRollups(db, clusterId);
  return ids;
}

export async function insertRow(
  db: Queryable,
  table: InventoryTable,
  clusterId: string,
  row: RowValues,
): Promise<string> {
  const [id] = await insertRows(db, table, clusterId, [row]);
  return id!;
}

/** A client, an environment and an asset to hang clusters on. */
export async function createTenant(db: Queryable): Promise<{
  clientId: string;
  environmentId: string;
}> {
  const suffix = randomUUID().slice(0, 8);
  const client = await queryOne<{ id: string }>(
    db,
    `insert into clients (slug, name) values ($1, $1) returning id`,
    [`client-${suffix}`],
  );
  const environment = await queryOne<{ id: string }>(
    db,
    `insert into environments (client_id, slug, name)
     values ($1, 'production', 'Production') returning id`,
    [client.id],
  );
  return { clientId: client.id, environmentId: environment.id };
}

/** A cluster (with its CMDB asset) of the tenant; returns its id. */
export async function createCluster(
  db: Queryable,
  tenant: { clientId: string; environmentId: string },
  name = `cluster-${randomUUID().slice(0, 8)}`,
): Promise<string> {
  const asset = await queryOne<{ id: string }>(
    db,
    `insert into assets (client_id, environment_id, asset_type, name, status)
     values ($1, $2, 'cluster', $3, 'active') returning id`,
    [tenant.clientId, tenant.environmentId, name],
  );
  const cluster = await queryOne<{ id: string }>(
    db,
    `insert into clusters (asset_id, client_id, environment_id, agent_id, name, slug)
     values ($1, $2, $3, $4, $5, $5) returning id`,
    [asset.id, tenant.clientId, tenant.environmentId, randomUUID(), name],
  );
  return cluster.id;
}
