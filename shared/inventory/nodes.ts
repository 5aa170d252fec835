/**
 * A cluster's nodes: the node list, one node, the Nodes tab's capacity table
 * (spec: "Node Capacity") and a node's pods. Every read filters by the
 * cluster id as well as the node's own id, so a node of another cluster is
 * a 404 even when its id is known.
 */

import { type Queryable, query, queryMaybeOne } from '../db/pool.ts';
import { NotFoundError } from '../errors.ts';
import type { QueryParams } from '../http/query.ts';
import { isUuid } from '../patterns.ts';
import { columnsOf, type ListPage, runList } from './list.ts';
import { LISTS } from './lists.ts';
import {
  type NodeCapacityRecord,
  type NodeRecord,
  nodeCapacityRecord,
  nodeRecord,
  type PodRecord,
} from './records.ts';

/** Node Capacity returns at most this many nodes, by name. */
export const NODE_CAPACITY_LIMIT = 1000;

/**
 * A stored usage of 0 is a legacy "no metrics" (metrics-server never reports
 * a running node at exactly 0), so it reads as null like a missing one.
 */
const NODE_SELECT = columnsOf(nodeRecord, {
  usage_cpu_millicores: 'nullif(usage_cpu_millicores, 0)',
  usage_memory_bytes: 'nullif(usage_memory_bytes, 0)',
});

const LIST_NODES_SQL = `
  select ${NODE_SELECT}
  from k8s_nodes
  where cluster_id = $1
  order by name, id`;

/**
 * GET /clusters/:id/nodes — every node of the cluster (capacity,
 * allocatable, usage, host linkage as host_id), ordered by name. Not paged:
 * the spec returns all nodes; meta.total is their count.
 */
export async function listNodes(
  db: Queryable,
  clusterId: string,
): Promise<{ data: NodeRecord[]; meta: { total: number } }> {
  const rows = await query(db, LIST_NODES_SQL, [clusterId]);
  const data = rows.map((row) => nodeRecord.parse(row));
  return { data, meta: { total: data.length } };
}

const GET_NODE_SQL = `
  select ${NODE_SELECT}
  from k8s_nodes
  where id = $1 and cluster_id = $2`;

/**
 * GET /clusters/:id/nodes/:nodeID — the node list's record. Throws
 * NotFoundError('node not found') for an unknown id or another cluster's.
 */
export async function getNode(
  db: Queryable,
  clusterId: string,
  nodeId: string,
): Promise<{ data: NodeRecord }> {
  const row = isUuid(nodeId)
    ? await queryMaybeOne(db, GET_NODE_SQL, [nodeId, clusterId])
    : undefined;
  if (row === undefined) throw new NotFoundError('node not found');
  return { data: nodeRecord.parse(row) };
}

/**
 * One statement: the first nodes by name with the cluster's node count (the
 * window runs before the limit). Requests and limits, like the pods_active
 * fallback count, cover pods not Succeeded/Failed (a pod with no phase yet
 * counts as active): the sync keeps them on each node row
 * (k8s_refresh_rollups), so no pod is read here.
 */
const NODE_CAPACITY_SQL = `
  select id, name, status,
         coalesce(roles, '{}') as roles,
         unschedulable,
         coalesce(pod_count, pods_active) as pod_count,
         allocatable_cpu_millicores as cpu_allocatable_millicores,
         pods_cpu_requested_millicores as cpu_requested_millicores,
         pods_cpu_limits_millicores as cpu_limits_millicores,
         nullif(usage_cpu_millicores, 0) as cpu_used_millicores,
         allocatable_memory_bytes as mem_allocatable_bytes,
         pods_mem_requested_bytes as mem_requested_bytes,
         pods_mem_limits_bytes as mem_limits_bytes,
         nullif(usage_memory_bytes, 0) as mem_used_bytes,
         allocatable_pods as pods_allocatable,
         count(*) over () as total
  from k8s_nodes
  where cluster_id = $1
  order by name, id
  limit $2`;

export interface NodeCapacity {
  nodes: NodeCapacityRecord[];
  /** total > the nodes returned. */
  truncated: boolean;
  /** The cluster's node count, before the limit. */
  total: number;
}

/**
 * GET /clusters/:id/nodes/capacity — at most 1,000 nodes by name, read in
 * one query. pod_count is the count the agent reported for the node, or,
 * when it reported none, the stored pods on it not Succeeded/Failed.
 */
export async function listNodeCapacity(
  db: Queryable,
  clusterId: string,
): Promise<{ data: NodeCapacity }> {
  const rows = await query<{ total: number }>(db, NODE_CAPACITY_SQL, [
    clusterId,
    NODE_CAPACITY_LIMIT,
  ]);
  const total = rows[0]?.total ?? 0;
  const nodes = rows.map((row) => nodeCapacityRecord.parse(row));
  return { data: { nodes, truncated: total > nodes.length, total } };
}

/**
 * GET /clusters/:id/nodes/:nodeID/pods — the pods list (same parameters,
 * record and paging) narrowed to the node's pods. The pods are filtered by
 * the cluster id as well as the node's, so a node of another cluster, or an
 * unknown one, has no pods (spec: an ID from another cluster returns no
 * rows), where Get Cluster Node answers 404.
 */
export function listNodePods(
  db: Queryable,
  clusterId: string,
  nodeId: string,
  params: QueryParams,
): Promise<ListPage<PodRecord>> {
  return runList(db, LISTS.pods, clusterId, params, {
    name: 'node',
    id: nodeId,
  });
}
