-- The capacity block of List Clusters' include=capacity and of the cluster
-- summary (CLUSTER_CAPACITY_SQL) sums four narrow pod columns per phase over
-- every pod of the page's clusters. Without this index that read visits the
-- wide pod rows themselves: a bitmap heap scan of ~10k pages for 20
-- clusters, a parallel seq scan of the whole table for 100. Keyed
-- (cluster_id, phase) with the sums' columns included, it is read by an
-- index-only scan in an order that lets the per-phase grouping stream.
create index idx_k8s_pods_capacity on k8s_pods (cluster_id, phase)
  include (cpu_requests_millicores, cpu_limits_millicores,
           memory_requests_bytes, memory_limits_bytes);

-- Its key serves the pods list's phase filter too; one index fewer for every
-- sync to maintain.
drop index idx_k8s_pods_phase;
