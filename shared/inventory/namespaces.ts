/**
 * A cluster's namespaces: the namespace list and the Namespaces tab's usage
 * table (spec: "Namespace Usage").
 */
import { type Queryable, query } from '../db/pool.ts';
import { columnsOf } from './list.ts';
import {
  type NamespaceRecord,
  type NamespaceUsageRecord,
  namespaceRecord,
  namespaceUsageRecord,
} from './records.ts';

const LIST_NAMESPACES_SQL = `
  select ${columnsOf(namespaceRecord)}
  from k8s_namespaces
  where cluster_id = $1
  order by name, id`;

/**
 * GET /clusters/:id/namespaces — every namespace with the counts the sync
 * stored, ordered by name. Not paged; meta.total is their count.
 */
export async function listNamespaces(
  db: Queryable,
  clusterId: string,
): Promise<{ data: NamespaceRecord[]; meta: { total: number } }> {
  const rows = await query(db, LIST_NAMESPACES_SQL, [clusterId]);
  const data = rows.map((row) => namespaceRecord.parse(row));
  return { data, meta: { total: data.length } };
}

/**
 * The figures the sync keeps on each namespace row (k8s_refresh_rollups):
 * pods are matched to a namespace by name; pods_total and restarts count
 * every pod; requests and limits only pods not Succeeded/Failed (a pod with
 * no phase yet counts as active).
 */
const NAMESPACE_USAGE_SQL = `
  select name,
         workload_count,
         pod_count as pods_total,
         pods_running,
         pods_restarts as restarts,
         pods_cpu_requested_millicores as cpu_requested_millicores,
         pods_cpu_limits_millicores as cpu_limits_millicores,
         pods_mem_requested_bytes as mem_requested_bytes,
         pods_mem_limits_bytes as mem_limits_bytes
  from k8s_namespaces
  where cluster_id = $1
  order by name, id`;

/**
 * GET /clusters/:id/namespaces/usage — every namespace (uncapped, by name)
 * with its pods' counts and sums; zeros for a namespace with no pods.
 */
export async function listNamespaceUsage(
  db: Queryable,
  clusterId: string,
): Promise<{ data: NamespaceUsageRecord[] }> {
  const rows = await query(db, NAMESPACE_USAGE_SQL, [clusterId]);
  return { data: rows.map((row) => namespaceUsageRecord.parse(row)) };
}
