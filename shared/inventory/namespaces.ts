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
 * Pods are matched to a namespace by name. pods_total and restarts count
 * every pod; requests and limits only pods not Succeeded/Failed (a pod
 * with no phase yet counts as active). workload_count is the stored value.
 */
const NAMESPACE_USAGE_SQL = `
  select ns.name,
         ns.workload_count,
         coalesce(p.pods_total, 0) as pods_total,
         coalesce(p.pods_running, 0) as pods_running,
         coalesce(p.restarts, 0) as restarts,
         coalesce(p.cpu_requested, 0) as cpu_requested_millicores,
         coalesce(p.cpu_limits, 0) as cpu_limits_millicores,
         coalesce(p.mem_requested, 0) as mem_requested_bytes,
         coalesce(p.mem_limits, 0) as mem_limits_bytes
  from k8s_namespaces ns
  left join (
    select namespace,
           count(*) as pods_total,
           count(*) filter (where phase = 'Running') as pods_running,
           sum(restart_count) as restarts,
           sum(cpu_requests_millicores) filter (where active) as cpu_requested,
           sum(cpu_limits_millicores) filter (where active) as cpu_limits,
           sum(memory_requests_bytes) filter (where active) as mem_requested,
           sum(memory_limits_bytes) filter (where active) as mem_limits
    from (
      select namespace, phase, restart_count, cpu_requests_millicores,
             cpu_limits_millicores, memory_requests_bytes,
             memory_limits_bytes,
             coalesce(phase, '') not in ('Succeeded', 'Failed') as active
      from k8s_pods
      where cluster_id = $1
    ) pods
    group by namespace
  ) p on p.namespace = ns.name
  where ns.cluster_id = $1
  order by ns.name, ns.id`;

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
