/**
 * Cluster Summary: a health digest of one cluster from PostgreSQL, every
 * section read by one SELECT: one statement reads one snapshot, which is
 * what the spec's read-only, repeatable-read transaction is for, in one
 * round trip instead of four. Lists are capped; the counts are exact; every
 * list is [] when empty; generated_at is the database's time of the snapshot
 * (the transaction's now(), which also anchors the "past hour" and "more
 * than 5 minutes" windows).
 */
import { type Queryable, queryMaybeOne } from '../db/pool.ts';
import { NotFoundError } from '../errors.ts';
import {
  type CapacityBlock,
  type HealthCountsRow,
  healthCountsColumns,
  toHealthCounts,
  WARNINGS_1H_WHERE,
} from './capacity.ts';

export interface ClusterSummary {
  nodes: {
    total: number;
    ready: number;
    not_ready: number;
    with_metrics: number;
  };
  not_ready_nodes: string[];
  pods: {
    total: number;
    running: number;
    pending: number;
    succeeded: number;
    failed: number;
    unknown: number;
  };
  waiting: { reason: string; count: number }[];
  pending_long: { namespace: string; name: string; age_seconds: number }[];
  top_restarters: {
    namespace: string;
    name: string;
    workload_kind: string | null;
    workload: string | null;
    restarts: number;
  }[];
  workloads_not_ready: {
    id: string;
    kind: string;
    namespace: string;
    name: string;
    ready: number;
    desired: number;
  }[];
  capacity: CapacityBlock;
  warning_events_1h: number;
  top_warning_reasons: { reason: string; count: number }[];
  generated_at: Date;
}

export const SUMMARY_LIMITS = {
  notReadyNodes: 10,
  waitingReasons: 10,
  pendingLong: 10,
  topRestarters: 5,
  workloadsNotReady: 10,
  topWarningReasons: 5,
} as const;

// $1 cluster id. with_metrics: nodes linked to a host of the cluster's own
// environment, the rule ingest links by; a link to a host since moved to
// another environment does not count. The pod counts and waiting reasons
// (per container, init containers included, a missing reason as "Unknown")
// are kept on the cluster row by the sync (k8s_refresh_rollups); the pod
// lists below read their rows through partial indexes, never every pod.
// The nodes' counts and names are one pass over the cluster's nodes, and
// the past hour's warnings one grouped read, their sum the count: each
// table a statement names costs planning on every request (the API does
// not prepare statements), and here planning was most of the CPU.
const SUMMARY_SQL = `
  select
    now() as generated_at,
    -- The same figures as List Clusters' include=capacity.
    ${healthCountsColumns('warnings.total')},
    node_counts.nodes,
    node_counts.not_ready_nodes,
    json_build_object(
      'total', c.pods_total,
      'running', c.pods_running,
      'pending', c.pods_pending,
      'succeeded', c.pods_succeeded,
      'failed', c.pods_failed,
      'unknown', c.pods_unknown) as pods,
    -- Stored as jsonb, whose objects sort their keys: rebuilt reason first.
    (select coalesce(json_agg(json_build_object(
                       'reason', w.item ->> 'reason',
                       'count', (w.item ->> 'count')::int)
                     order by w.n), '[]')
       from (select item, n
               from jsonb_array_elements(c.pods_waiting_reasons)
                    with ordinality as r(item, n)
              order by n
              limit ${SUMMARY_LIMITS.waitingReasons}) w) as waiting,
    (select coalesce(json_agg(json_build_object(
                       'namespace', namespace, 'name', name,
                       'age_seconds', age_seconds)
                     order by pending_from, namespace, name), '[]')
       from (select namespace, name,
                    coalesce(pending_since, created_at) as pending_from,
                    floor(extract(epoch from
                      now() - coalesce(pending_since, created_at)))::bigint as age_seconds
               from k8s_pods
              where cluster_id = $1
                and phase = 'Pending'
                and coalesce(pending_since, created_at) < now() - interval '5 minutes'
              order by coalesce(pending_since, created_at), namespace, name
              limit ${SUMMARY_LIMITS.pendingLong}) x) as pending_long,
    (select coalesce(json_agg(json_build_object(
                       'namespace', namespace, 'name', name,
                       'workload_kind', workload_kind, 'workload', workload_name,
                       'restarts', restart_count)
                     order by restart_count desc, namespace, name), '[]')
       from (select namespace, name, workload_kind, workload_name, restart_count
               from k8s_pods
              where cluster_id = $1
                and restart_count > 0
              order by restart_count desc, namespace, name
              limit ${SUMMARY_LIMITS.topRestarters}) x) as top_restarters,
    -- In the order of idx_k8s_workloads_not_ready_ordered (migrations/0029).
    (select coalesce(json_agg(json_build_object(
                       'id', id, 'kind', kind, 'namespace', namespace,
                       'name', name, 'ready', ready, 'desired', desired)
                     order by desired - ready desc, namespace, kind, name, id), '[]')
       from (select id, kind, namespace, name,
                    coalesce(replicas_ready, 0) as ready,
                    replicas_desired as desired
               from k8s_workloads
              where cluster_id = $1
                and coalesce(replicas_ready, 0) < replicas_desired
              order by replicas_desired - coalesce(replicas_ready, 0) desc,
                       namespace, kind, name, id
              limit ${SUMMARY_LIMITS.workloadsNotReady}) x) as workloads_not_ready,
    warnings.top_warning_reasons
  from clusters c
  cross join lateral (
    select json_build_object(
             'total', count(*),
             'ready', count(*) filter (where n.status = 'Ready'),
             'not_ready', count(*) filter (where n.status is distinct from 'Ready'),
             'with_metrics', count(h.id)) as nodes,
           coalesce(to_json((array_agg(n.name order by n.name)
                               filter (where n.status is distinct from 'Ready'))
                              [1:${SUMMARY_LIMITS.notReadyNodes}]), '[]') as not_ready_nodes
      from k8s_nodes n
      left join hosts h on h.id = n.host_id and h.environment_id = c.environment_id
     where n.cluster_id = c.id) node_counts
  cross join lateral (
    select coalesce(sum(r.n), 0)::bigint as total,
           coalesce(json_agg(json_build_object('reason', r.reason, 'count', r.n)
                             order by r.n desc, r.reason)
                      filter (where r.rank <= ${SUMMARY_LIMITS.topWarningReasons}),
                    '[]') as top_warning_reasons
      from (select coalesce(e.reason, 'Unknown') as reason, count(*) as n,
                   row_number() over (order by count(*) desc,
                                               coalesce(e.reason, 'Unknown')) as rank
              from k8s_events e
             where ${WARNINGS_1H_WHERE}
             group by 1) r) warnings
  where c.id = $1`;

type SummaryRow = HealthCountsRow &
  Omit<ClusterSummary, 'capacity' | 'warning_events_1h'>;

export async function getClusterSummary(
  db: Queryable,
  clusterId: string,
): Promise<ClusterSummary> {
  const summary = await queryMaybeOne<SummaryRow>(db, SUMMARY_SQL, [clusterId]);
  // Deleted since the caller's access was checked.
  if (!summary) throw new NotFoundError('cluster not found');
  const counts = toHealthCounts(summary);
  return {
    nodes: summary.nodes,
    not_ready_nodes: summary.not_ready_nodes,
    pods: summary.pods,
    waiting: summary.waiting,
    pending_long: summary.pending_long,
    top_restarters: summary.top_restarters,
    workloads_not_ready: summary.workloads_not_ready,
    capacity: counts.capacity,
    warning_events_1h: counts.warning_events_1h,
    top_warning_reasons: summary.top_warning_reasons,
    generated_at: summary.generated_at,
  };
}
