/**
 * Inventory rows for the read API's tests, written with plain INSERTs so
 * every figure a test expects can be computed by hand from what is here.
 * Columns left out take the schema's defaults; `content_hash` is a constant
 * (the API never reads it).
 */
import { randomUUID } from 'node:crypto';
import type { Role } from '../../shared/auth/roles.ts';
import { type Db, queryOne } from '../../shared/db/pool.ts';
import {
  type HistoryRow,
  insertEventHistory,
} from '../../shared/events/history.ts';
import type { insertAudit } from '../../shared/live/audit.ts';
import { refreshRollups } from '../../shared/sync/repo.ts';

type Values = Record<string, unknown>;

const JSONB_COLUMNS = new Set([
  'labels',
  'taints',
  'conditions',
  'containers',
  'annotations',
  'collection',
  'addresses',
]);

/** Inserts one row into `table` (a name written in this file) and returns its id. */
async function insert(db: Db, table: string, values: Values): Promise<string> {
  const names = Object.keys(values);
  const placeholders = names.map((name, i) =>
    JSONB_COLUMNS.has(name) ? `$${i + 1}::jsonb` : `$${i + 1}`,
  );
  const params = names.map((name) =>
    JSONB_COLUMNS.has(name) ? JSON.stringify(values[name]) : values[name],
  );
  const row = await queryOne<{ id: string }>(
    db,
    `insert into ${table} (${names.join(', ')}) values (${placeholders.join(', ')}) returning id`,
    params,
  );
  return row.id;
}

/** A moment `seconds` before now, as the database will compare it. */
export function secondsAgo(seconds: number): Date {
  return new Date(Date.now() - seconds * 1000);
}

export function insertClient(db: Db, slug: string): Promise<string> {
  return insert(db, 'clients', { slug, name: slug });
}

export function insertEnvironment(
  db: Db,
  clientId: string,
  slug: string,
): Promise<string> {
  return insert(db, 'environments', { client_id: clientId, slug, name: slug });
}

export function insertHost(
  db: Db,
  host: { clientId: string; environmentId: string | null; hostname: string },
): Promise<string> {
  return insert(db, 'hosts', {
    client_id: host.clientId,
    environment_id: host.environmentId,
    hostname: host.hostname,
  });
}

export interface ClusterFixture {
  clientId: string;
  environmentId: string;
  name: string;
  status?: 'healthy' | 'degraded' | 'unreachable' | 'unknown';
  [column: string]: unknown;
}

/** A cluster and its CMDB asset. */
export async function insertCluster(
  db: Db,
  cluster: ClusterFixture,
): Promise<string> {
  const { clientId, environmentId, name, ...rest } = cluster;
  const assetId = await insert(db, 'assets', {
    client_id: clientId,
    environment_id: environmentId,
    asset_type: 'kubernetes_cluster',
    name,
    status: 'active',
  });
  return insert(db, 'clusters', {
    asset_id: assetId,
    client_id: clientId,
    environment_id: environmentId,
    agent_id: randomUUID(),
    name,
    slug: name.toLowerCase().replace(/[^a-z0-9-]/g, '-'),
    last_seen_at: new Date(),
    ...rest,
  });
}

/**
 * Inserts a cluster's child row, then refreshes the figures the sync keeps
 * beside the rows (node, namespace and cluster rollups), as the sync does.
 */
async function insertChildRow(
  db: Db,
  table: `k8s_${string}`,
  values: Values & { cluster_id: string },
): Promise<string> {
  const id = await insert(db, table, values);
  await refreshRollups(db, values.cluster_id);
  return id;
}

export function insertNode(
  db: Db,
  clusterId: string,
  node: Values & { name: string },
): Promise<string> {
  return insertChildRow(db, 'k8s_nodes', {
    cluster_id: clusterId,
    uid: randomUUID(),
    content_hash: 'fixture',
    ...node,
  });
}

export function insertNamespace(
  db: Db,
  clusterId: string,
  name: string,
): Promise<string> {
  return insertChildRow(db, 'k8s_namespaces', {
    cluster_id: clusterId,
    name,
    uid: randomUUID(),
    status: 'Active',
    content_hash: 'fixture',
  });
}

export function insertWorkload(
  db: Db,
  clusterId: string,
  workload: Values & { kind: string; namespace: string; name: string },
): Promise<string> {
  return insertChildRow(db, 'k8s_workloads', {
    cluster_id: clusterId,
    uid: randomUUID(),
    content_hash: 'fixture',
    ...workload,
  });
}

export interface ContainerFixture {
  name: string;
  state: 'running' | 'waiting' | 'terminated';
  waiting_reason?: string | null;
  init?: boolean;
  restart_count?: number;
}

export async function insertPod(
  db: Db,
  clusterId: string,
  pod: Values & {
    namespace: string;
    name: string;
    containers?: ContainerFixture[];
  },
): Promise<string> {
  const containers = (pod.containers ?? []).map((c) => ({
    image: `registry.example/${c.name}:1`,
    init: false,
    ready: c.state === 'running',
    restart_count: 0,
    waiting_reason: null,
    last_termination_reason: null,
    requests: null,
    limits: null,
    ...c,
  }));
  return insertChildRow(db, 'k8s_pods', {
    cluster_id: clusterId,
    uid: randomUUID(),
    content_hash: 'fixture',
    created_at: secondsAgo(86_400),
    ...pod,
    containers,
    total_containers: containers.length,
    ready_containers: containers.filter((c) => c.ready).length,
  });
}

export function insertEvent(
  db: Db,
  clusterId: string,
  event: Values & { namespace: string; name: string },
): Promise<string> {
  return insert(db, 'k8s_events', {
    cluster_id: clusterId,
    uid: randomUUID(),
    content_hash: 'fixture',
    count: 1,
    ...event,
  });
}

/** Sightings in the 14-day history, written by the sync's own insert. */
export function insertEventSightings(
  db: Db,
  clusterId: string,
  sightings: readonly HistoryRow[],
): Promise<void> {
  return insertEventHistory(db, clusterId, JSON.stringify(sightings));
}

/** Any other child row of a cluster (services, ingresses, ...). */
export function insertChild(
  db: Db,
  table: `k8s_${string}`,
  clusterId: string,
  row: Values & { namespace: string; name: string },
): Promise<string> {
  return insertChildRow(db, table, {
    cluster_id: clusterId,
    uid: randomUUID(),
    content_hash: 'fixture',
    ...row,
  });
}

/** A grant of `role` on a client, or on one environment of it. */
export function insertGrant(
  db: Db,
  grant: {
    email: string;
    role: Role;
    clientId: string;
    environmentId?: string | null;
  },
): Promise<string> {
  return insert(db, 'user_grants', {
    email: grant.email,
    role: grant.role,
    client_id: grant.clientId,
    environment_id: grant.environmentId ?? null,
  });
}

export const GiB = 1024 ** 3;
export const MiB = 1024 ** 2;

/** A client, one environment of it and one cluster there, each by name. */
export async function insertClientCluster(
  db: Db,
  names: { client: string; environment: string; cluster: string },
): Promise<{ clientId: string; environmentId: string; clusterId: string }> {
  const clientId = await insertClient(db, names.client);
  const environmentId = await insertEnvironment(
    db,
    clientId,
    names.environment,
  );
  const clusterId = await insertCluster(db, {
    clientId,
    environmentId,
    name: names.cluster,
  });
  return { clientId, environmentId, clusterId };
}

/** A cluster of its own (client acme, environment prod) and a logs read's audit entry on it. */
export async function insertAuditedCluster(
  db: Db,
): Promise<Parameters<typeof insertAudit>[1]> {
  const { clientId, environmentId, clusterId } = await insertClientCluster(db, {
    client: 'acme',
    environment: 'prod',
    cluster: 'c1',
  });
  return {
    requestId: randomUUID(),
    clientId,
    environmentId,
    clusterId,
    clusterName: 'c1',
    agentId: randomUUID(),
    subject: 'sub-1',
    email: 'a@example.test',
    actor: 'a@example.test',
    route: 'logs',
    namespace: 'shop',
    pod: 'api-1',
  };
}
