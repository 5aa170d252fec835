-- Per-cluster pod figures the capacity block needs, kept on the cluster row
-- by the sync in the same transaction that writes the pods (as it keeps the
-- node, namespace and workload counts). List Clusters' include=capacity and
-- the summary then read one row per cluster instead of every pod of the
-- page's clusters. Requests and limits sum pods not in Succeeded/Failed.

alter table clusters
  add column pods_total integer not null default 0,
  add column pods_running integer not null default 0,
  add column pods_not_running integer not null default 0,
  add column pods_cpu_requested_millicores bigint not null default 0,
  add column pods_cpu_limits_millicores bigint not null default 0,
  add column pods_mem_requested_bytes bigint not null default 0,
  add column pods_mem_limits_bytes bigint not null default 0;

update clusters c set
  pods_total = s.total,
  pods_running = s.running,
  pods_not_running = s.not_running,
  pods_cpu_requested_millicores = s.cpu_requested,
  pods_cpu_limits_millicores = s.cpu_limits,
  pods_mem_requested_bytes = s.mem_requested,
  pods_mem_limits_bytes = s.mem_limits
from (
  select cluster_id,
         count(*) as total,
         count(*) filter (where phase = 'Running') as running,
         count(*) filter (where phase is distinct from 'Running'
                            and phase is distinct from 'Succeeded') as not_running,
         coalesce(sum(cpu_requests_millicores) filter (where active), 0) as cpu_requested,
         coalesce(sum(cpu_limits_millicores) filter (where active), 0) as cpu_limits,
         coalesce(sum(memory_requests_bytes) filter (where active), 0) as mem_requested,
         coalesce(sum(memory_limits_bytes) filter (where active), 0) as mem_limits
  from (select *, coalesce(phase not in ('Succeeded', 'Failed'), true) as active
        from k8s_pods) p
  group by cluster_id
) s
where c.id = s.cluster_id;
