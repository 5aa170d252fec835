-- The summary's not-ready workloads, in the summary's order: the read stops
-- after its 10 instead of fetching and sorting every not-ready workload of
-- the cluster (a heap page each unless the page is all-visible). Replaces
-- 0010's, which held the columns but not the order; nothing else reads it.
create index idx_k8s_workloads_not_ready_ordered
  on k8s_workloads (cluster_id,
                    (replicas_desired - coalesce(replicas_ready, 0)) desc,
                    namespace, kind, name, id)
  where coalesce(replicas_ready, 0) < replicas_desired;
drop index idx_k8s_workloads_not_ready;
