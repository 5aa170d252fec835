-- The figures (0005) were recomputed from every pod of the cluster whenever
-- a sync wrote, pruned or relinked one of their rows: 8-9 ms of a medium
-- cluster's steady resync (2,000 pods) that changed 20 pods, about a third
-- of its database time, and more with the cluster's size. From here on they
-- are kept by the writes themselves: statement triggers on the rows the
-- figures are read from add what the written rows give and take back what
-- their old versions gave, so a write costs in proportion to the rows it
-- wrote, whatever wrote them (an upsert, a COPY, a prune, a link repair, a
-- cascade from a pruned node or namespace).
--
-- - A pod's share of the figures is defined once, k8s_pod_rollup, read by
--   the full recompute and the triggers alike. Counts and sums add up, so
--   they move by the difference; the waiting reasons' list is merged with
--   the reasons that changed, only when a changed pod waits or waited.
-- - A namespace's pod figures match pods by name, not by link: a namespace
--   row that arrives after its pods takes in those already stored.
-- - The node totals (count, capacity, usage: nullable sums over reporting
--   nodes) are recomputed from the cluster's nodes when a node's inputs
--   changed: tens of rows, not thousands.
-- - k8s_refresh_rollups stays the full recompute: the first sync (which
--   writes every row, so one pass over them is cheaper than the triggers'
--   arrays) defers the triggers to it, and it is what the maintained
--   figures must equal (the property test compares them). Each row is still
--   written only when a figure changed.
--
-- The rules are 0005's and 0010's (0022's prefilter kept): active pods are
-- those not Succeeded/Failed (no phase counts as active); requests and
-- limits sum active pods only; waiting reasons count waiting containers
-- (init containers included), a missing reason as "Unknown", every reason,
-- most frequent first, then by reason.

-- A pod's waiting containers' reasons (null when none waits). Not inlined
-- (it has a subquery): callers pass only the pods whose containers contain
-- a waiting one, which the containment test finds without unpacking them.
create function k8s_pod_waiting_reasons(containers jsonb) returns text[]
language sql immutable parallel safe as $$
  select array_agg(coalesce(ct ->> 'waiting_reason', 'Unknown'))
    from jsonb_array_elements(
           case when jsonb_typeof(containers) = 'array'
                then containers else '[]'::jsonb end) ct
   where ct ->> 'state' = 'waiting'
$$;

-- What one pod adds to the figures, times weight (1 for a row as stored,
-- -1 for a row version a write replaced or removed).
create type k8s_pod_rollup as (
  weight integer,
  cluster_id uuid,
  node_id uuid,
  namespace text,
  active integer,
  running integer,
  pending integer,
  succeeded integer,
  failed integer,
  unknown integer,
  not_running integer,
  restarts bigint,
  cpu_req bigint,
  cpu_lim bigint,
  mem_req bigint,
  mem_lim bigint,
  waiting text[]
);

-- One select of expressions, no FROM: PostgreSQL inlines it, so a caller
-- reading some fields evaluates only those (the waiting reasons only where
-- read).
create function k8s_pod_rollup(p k8s_pods, weight integer)
returns k8s_pod_rollup
language sql immutable parallel safe as $$
  select row(
    weight, p.cluster_id, p.node_id, p.namespace,
    coalesce(p.phase not in ('Succeeded', 'Failed'), true)::integer,
    (p.phase is not distinct from 'Running')::integer,
    (p.phase is not distinct from 'Pending')::integer,
    (p.phase is not distinct from 'Succeeded')::integer,
    (p.phase is not distinct from 'Failed')::integer,
    (p.phase is null
       or p.phase not in ('Running', 'Pending', 'Succeeded', 'Failed'))::integer,
    (p.phase is distinct from 'Running'
       and p.phase is distinct from 'Succeeded')::integer,
    coalesce(p.restart_count, 0),
    case when coalesce(p.phase not in ('Succeeded', 'Failed'), true)
         then coalesce(p.cpu_requests_millicores, 0) else 0 end,
    case when coalesce(p.phase not in ('Succeeded', 'Failed'), true)
         then coalesce(p.cpu_limits_millicores, 0) else 0 end,
    case when coalesce(p.phase not in ('Succeeded', 'Failed'), true)
         then coalesce(p.memory_requests_bytes, 0) else 0 end,
    case when coalesce(p.phase not in ('Succeeded', 'Failed'), true)
         then coalesce(p.memory_limits_bytes, 0) else 0 end,
    case when p.containers @> '[{"state": "waiting"}]'
         then k8s_pod_waiting_reasons(p.containers) end
  )::k8s_pod_rollup
$$;

-- The cluster's node count, capacity and usage, from its nodes. Usage: a
-- node reports when its usage is above 0; used figures sum reporting nodes
-- only and are null when none reports, paired with the allocatable of
-- those same nodes. (plpgsql with generic plans: see k8s_add_pod_rollups.)
create function k8s_refresh_node_totals(p_cluster uuid) returns void
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
  update clusters c set
    node_count = n.nodes,
    nodes_cpu_allocatable_millicores = n.cpu_alloc,
    nodes_mem_allocatable_bytes = n.mem_alloc,
    nodes_pods_allocatable = n.pods_alloc,
    nodes_cpu_used_millicores = n.cpu_used,
    nodes_cpu_allocatable_reporting_millicores = n.cpu_alloc_reporting,
    nodes_cpu_usage_nodes = n.cpu_usage_nodes,
    nodes_mem_used_bytes = n.mem_used,
    nodes_mem_allocatable_reporting_bytes = n.mem_alloc_reporting,
    nodes_mem_usage_nodes = n.mem_usage_nodes
    from (
      select count(*) as nodes,
             coalesce(sum(allocatable_cpu_millicores), 0) as cpu_alloc,
             coalesce(sum(allocatable_memory_bytes), 0) as mem_alloc,
             coalesce(sum(allocatable_pods), 0) as pods_alloc,
             sum(usage_cpu_millicores)
               filter (where usage_cpu_millicores > 0) as cpu_used,
             coalesce(sum(allocatable_cpu_millicores)
                        filter (where usage_cpu_millicores > 0), 0)
               as cpu_alloc_reporting,
             count(*) filter (where usage_cpu_millicores > 0)
               as cpu_usage_nodes,
             sum(usage_memory_bytes)
               filter (where usage_memory_bytes > 0) as mem_used,
             coalesce(sum(allocatable_memory_bytes)
                        filter (where usage_memory_bytes > 0), 0)
               as mem_alloc_reporting,
             count(*) filter (where usage_memory_bytes > 0)
               as mem_usage_nodes
        from k8s_nodes
       where cluster_id = p_cluster
    ) n
   where c.id = p_cluster
     and (c.node_count, c.nodes_cpu_allocatable_millicores,
          c.nodes_mem_allocatable_bytes, c.nodes_pods_allocatable,
          c.nodes_cpu_used_millicores,
          c.nodes_cpu_allocatable_reporting_millicores, c.nodes_cpu_usage_nodes,
          c.nodes_mem_used_bytes, c.nodes_mem_allocatable_reporting_bytes,
          c.nodes_mem_usage_nodes)
         is distinct from
         (n.nodes, n.cpu_alloc, n.mem_alloc, n.pods_alloc, n.cpu_used,
          n.cpu_alloc_reporting, n.cpu_usage_nodes, n.mem_used,
          n.mem_alloc_reporting, n.mem_usage_nodes);
end
$$;

-- The full recompute: every figure of the cluster from all its rows.
create or replace function k8s_refresh_rollups(p_cluster uuid) returns void
language sql as $$
  with pods as materialized (
    select r.*
      from k8s_pods p
      cross join lateral (select (k8s_pod_rollup(p, 1)).*) r
     where p.cluster_id = p_cluster
  ), by_node as (
    select n.id,
           coalesce(sum(p.active), 0) as active,
           coalesce(sum(p.cpu_req), 0) as cpu_req,
           coalesce(sum(p.cpu_lim), 0) as cpu_lim,
           coalesce(sum(p.mem_req), 0) as mem_req,
           coalesce(sum(p.mem_lim), 0) as mem_lim
      from k8s_nodes n
      left join pods p on p.node_id = n.id
     where n.cluster_id = p_cluster
     group by n.id
  ), node_update as (
    update k8s_nodes n set
      pods_active = b.active,
      pods_cpu_requested_millicores = b.cpu_req,
      pods_cpu_limits_millicores = b.cpu_lim,
      pods_mem_requested_bytes = b.mem_req,
      pods_mem_limits_bytes = b.mem_lim
      from by_node b
     where n.id = b.id
       and (n.pods_active, n.pods_cpu_requested_millicores,
            n.pods_cpu_limits_millicores, n.pods_mem_requested_bytes,
            n.pods_mem_limits_bytes)
           is distinct from (b.active, b.cpu_req, b.cpu_lim, b.mem_req, b.mem_lim)
  ), pod_totals as (
    select coalesce(sum(weight), 0) as total,
           coalesce(sum(running), 0) as running,
           coalesce(sum(pending), 0) as pending,
           coalesce(sum(succeeded), 0) as succeeded,
           coalesce(sum(failed), 0) as failed,
           coalesce(sum(unknown), 0) as unknown,
           coalesce(sum(not_running), 0) as not_running,
           coalesce(sum(cpu_req), 0) as cpu_req,
           coalesce(sum(cpu_lim), 0) as cpu_lim,
           coalesce(sum(mem_req), 0) as mem_req,
           coalesce(sum(mem_lim), 0) as mem_lim
      from pods
  ), waiting as (
    select coalesce(jsonb_agg(jsonb_build_object('reason', reason, 'count', n)
                              order by n desc, reason), '[]') as reasons
      from (select reason, count(*) as n
              from pods cross join lateral unnest(waiting) as reason
             group by reason) r
  ), pods_by_ns as (
    select namespace,
           sum(weight) as total,
           sum(running) as running,
           sum(restarts) as restarts,
           sum(cpu_req) as cpu_req,
           sum(cpu_lim) as cpu_lim,
           sum(mem_req) as mem_req,
           sum(mem_lim) as mem_lim
      from pods
     group by namespace
  ), workloads_by_ns as (
    select namespace, count(*) as n from k8s_workloads
     where cluster_id = p_cluster group by namespace
  ), services_by_ns as (
    select namespace, count(*) as n from k8s_services
     where cluster_id = p_cluster group by namespace
  ), by_ns as (
    select ns.id,
           coalesce(w.n, 0) as workloads,
           coalesce(s.n, 0) as services,
           coalesce(p.total, 0) as pods,
           coalesce(p.running, 0) as running,
           coalesce(p.restarts, 0) as restarts,
           coalesce(p.cpu_req, 0) as cpu_req,
           coalesce(p.cpu_lim, 0) as cpu_lim,
           coalesce(p.mem_req, 0) as mem_req,
           coalesce(p.mem_lim, 0) as mem_lim
      from k8s_namespaces ns
      left join pods_by_ns p on p.namespace = ns.name
      left join workloads_by_ns w on w.namespace = ns.name
      left join services_by_ns s on s.namespace = ns.name
     where ns.cluster_id = p_cluster
  ), namespace_update as (
    update k8s_namespaces ns set
      workload_count = b.workloads,
      service_count = b.services,
      pod_count = b.pods,
      pods_running = b.running,
      pods_restarts = b.restarts,
      pods_cpu_requested_millicores = b.cpu_req,
      pods_cpu_limits_millicores = b.cpu_lim,
      pods_mem_requested_bytes = b.mem_req,
      pods_mem_limits_bytes = b.mem_lim
      from by_ns b
     where ns.id = b.id
       and (ns.workload_count, ns.service_count, ns.pod_count,
            ns.pods_running, ns.pods_restarts,
            ns.pods_cpu_requested_millicores, ns.pods_cpu_limits_millicores,
            ns.pods_mem_requested_bytes, ns.pods_mem_limits_bytes)
           is distinct from
           (b.workloads, b.services, b.pods, b.running, b.restarts,
            b.cpu_req, b.cpu_lim, b.mem_req, b.mem_lim)
  ), counts as (
    select (select count(*) from by_ns) as namespaces,
           (select count(*) from k8s_workloads
             where cluster_id = p_cluster) as workloads
  )
  update clusters c set
    namespace_count = k.namespaces,
    workload_count = k.workloads,
    pods_total = p.total,
    pods_running = p.running,
    pods_pending = p.pending,
    pods_succeeded = p.succeeded,
    pods_failed = p.failed,
    pods_unknown = p.unknown,
    pods_not_running = p.not_running,
    pods_cpu_requested_millicores = p.cpu_req,
    pods_cpu_limits_millicores = p.cpu_lim,
    pods_mem_requested_bytes = p.mem_req,
    pods_mem_limits_bytes = p.mem_lim,
    pods_waiting_reasons = w.reasons
    from pod_totals p, waiting w, counts k
   where c.id = p_cluster
     and (c.namespace_count, c.workload_count,
          c.pods_total, c.pods_running, c.pods_pending, c.pods_succeeded,
          c.pods_failed, c.pods_unknown, c.pods_not_running,
          c.pods_cpu_requested_millicores, c.pods_cpu_limits_millicores,
          c.pods_mem_requested_bytes, c.pods_mem_limits_bytes,
          c.pods_waiting_reasons)
         is distinct from
         (k.namespaces, k.workloads,
          p.total, p.running, p.pending, p.succeeded, p.failed, p.unknown,
          p.not_running, p.cpu_req, p.cpu_lim, p.mem_req, p.mem_lim,
          w.reasons);
  select k8s_refresh_node_totals(p_cluster);
  -- Every figure is now what the rows give: the triggers keep them so.
  select set_config('k8s.rollups', '', true);
$$;

-- Whether a full recompute will follow in this transaction (a first
-- sync): the triggers then leave the figures to it.
create function k8s_rollups_deferred() returns boolean
language sql stable as $$
  select coalesce(current_setting('k8s.rollups', true), '') = 'deferred'
$$;

-- Adds the weighted pods' shares to their nodes, namespaces and clusters
-- (to their namespaces only with p_namespaces_only).
--
-- The functions a write calls are plpgsql, whose statements' plans are
-- kept for the connection (a SQL function's are made again on every call),
-- and generic from the first call: their parameters are arrays and ids,
-- whose values would not change the plan, and a custom plan is made again
-- on each of the first five calls (~1.5 ms each here).
create function k8s_add_pod_rollups(
  p_pods k8s_pod_rollup[],
  p_namespaces_only boolean
) returns void
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
begin
  if cardinality(p_pods) = 0 then return; end if;
  with d as (
    select cluster_id, namespace,
           sum(weight) as pods,
           sum(weight * running) as running,
           sum(weight * restarts) as restarts,
           sum(weight * cpu_req) as cpu_req,
           sum(weight * cpu_lim) as cpu_lim,
           sum(weight * mem_req) as mem_req,
           sum(weight * mem_lim) as mem_lim
      from unnest(p_pods)
     group by cluster_id, namespace
  )
  update k8s_namespaces ns set
    pod_count = ns.pod_count + d.pods,
    pods_running = ns.pods_running + d.running,
    pods_restarts = ns.pods_restarts + d.restarts,
    pods_cpu_requested_millicores = ns.pods_cpu_requested_millicores + d.cpu_req,
    pods_cpu_limits_millicores = ns.pods_cpu_limits_millicores + d.cpu_lim,
    pods_mem_requested_bytes = ns.pods_mem_requested_bytes + d.mem_req,
    pods_mem_limits_bytes = ns.pods_mem_limits_bytes + d.mem_lim
    from d
   where ns.cluster_id = d.cluster_id and ns.name = d.namespace
     and (d.pods, d.running, d.restarts, d.cpu_req, d.cpu_lim, d.mem_req,
          d.mem_lim) <> (0, 0, 0, 0, 0, 0, 0);
  if p_namespaces_only then return; end if;

  -- A node counts its cluster's pods only, as the full recompute does
  -- (a link is resolved within the cluster; a row written otherwise may
  -- name another cluster's node).
  with d as (
    select cluster_id, node_id,
           sum(weight * active) as active,
           sum(weight * cpu_req) as cpu_req,
           sum(weight * cpu_lim) as cpu_lim,
           sum(weight * mem_req) as mem_req,
           sum(weight * mem_lim) as mem_lim
      from unnest(p_pods)
     where node_id is not null
     group by cluster_id, node_id
  )
  update k8s_nodes n set
    pods_active = n.pods_active + d.active,
    pods_cpu_requested_millicores = n.pods_cpu_requested_millicores + d.cpu_req,
    pods_cpu_limits_millicores = n.pods_cpu_limits_millicores + d.cpu_lim,
    pods_mem_requested_bytes = n.pods_mem_requested_bytes + d.mem_req,
    pods_mem_limits_bytes = n.pods_mem_limits_bytes + d.mem_lim
    from d
   where n.id = d.node_id and n.cluster_id = d.cluster_id
     and (d.active, d.cpu_req, d.cpu_lim, d.mem_req, d.mem_lim)
         <> (0, 0, 0, 0, 0);

  with reasons as (
    select cluster_id, reason, sum(weight) as n
      from unnest(p_pods) cross join lateral unnest(waiting) as reason
     group by cluster_id, reason
    having sum(weight) <> 0
  ), d as (
    select cluster_id,
           sum(weight) as total,
           sum(weight * running) as running,
           sum(weight * pending) as pending,
           sum(weight * succeeded) as succeeded,
           sum(weight * failed) as failed,
           sum(weight * unknown) as unknown,
           sum(weight * not_running) as not_running,
           sum(weight * cpu_req) as cpu_req,
           sum(weight * cpu_lim) as cpu_lim,
           sum(weight * mem_req) as mem_req,
           sum(weight * mem_lim) as mem_lim,
           exists (select from reasons r where r.cluster_id = u.cluster_id)
             as reasons_changed
      from unnest(p_pods) u
     group by cluster_id
  )
  update clusters c set
    pods_total = c.pods_total + d.total,
    pods_running = c.pods_running + d.running,
    pods_pending = c.pods_pending + d.pending,
    pods_succeeded = c.pods_succeeded + d.succeeded,
    pods_failed = c.pods_failed + d.failed,
    pods_unknown = c.pods_unknown + d.unknown,
    pods_not_running = c.pods_not_running + d.not_running,
    pods_cpu_requested_millicores = c.pods_cpu_requested_millicores + d.cpu_req,
    pods_cpu_limits_millicores = c.pods_cpu_limits_millicores + d.cpu_lim,
    pods_mem_requested_bytes = c.pods_mem_requested_bytes + d.mem_req,
    pods_mem_limits_bytes = c.pods_mem_limits_bytes + d.mem_lim,
    -- The stored counts plus the changed ones, in the full recompute's
    -- order; a reason whose count fell to 0 leaves the list.
    pods_waiting_reasons = case when not d.reasons_changed
      then c.pods_waiting_reasons
      else (
        select coalesce(jsonb_agg(jsonb_build_object('reason', reason, 'count', n)
                                  order by n desc, reason), '[]')
          from (select reason, sum(n)::bigint as n
                  from (select s ->> 'reason' as reason,
                               (s ->> 'count')::bigint as n
                          from jsonb_array_elements(c.pods_waiting_reasons) s
                        union all
                        select reason, n from reasons r
                         where r.cluster_id = c.id) x
                 group by reason
                having sum(n) <> 0) y)
      end
    from d
   where c.id = d.cluster_id
     and (d.reasons_changed
          or (d.total, d.running, d.pending, d.succeeded, d.failed, d.unknown,
              d.not_running, d.cpu_req, d.cpu_lim, d.mem_req, d.mem_lim)
             <> (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
end
$$;

-- Pods: the new rows' shares added, the old versions' taken back.
create function k8s_pods_rollups() returns trigger
language plpgsql as $$
begin
  if k8s_rollups_deferred() then return null; end if;
  if tg_op = 'INSERT' then
    perform k8s_add_pod_rollups(array(
      select k8s_pod_rollup(n, 1) from new_rows n), false);
  elsif tg_op = 'UPDATE' then
    perform k8s_add_pod_rollups(array(
      select k8s_pod_rollup(n, 1) from new_rows n
      union all
      select k8s_pod_rollup(o, -1) from old_rows o), false);
  else
    perform k8s_add_pod_rollups(array(
      select k8s_pod_rollup(o, -1) from old_rows o), false);
  end if;
  return null;
end
$$;

-- A statement trigger may name its transition tables for one event only.
create trigger k8s_pods_rollups_insert after insert on k8s_pods
  referencing new table as new_rows
  for each statement execute function k8s_pods_rollups();
create trigger k8s_pods_rollups_update after update on k8s_pods
  referencing old table as old_rows new table as new_rows
  for each statement execute function k8s_pods_rollups();
create trigger k8s_pods_rollups_delete after delete on k8s_pods
  referencing old table as old_rows
  for each statement execute function k8s_pods_rollups();

-- Nodes: the totals of each cluster one of whose nodes came, went or
-- changed capacity or usage (not a change of its pod figures, which the
-- pods' trigger writes).
create function k8s_nodes_rollups() returns trigger
language plpgsql as $$
declare
  changed uuid;
begin
  if k8s_rollups_deferred() then return null; end if;
  if tg_op = 'INSERT' then
    for changed in select distinct cluster_id from new_rows loop
      perform k8s_refresh_node_totals(changed);
    end loop;
  elsif tg_op = 'UPDATE' then
    for changed in
      select distinct n.cluster_id
        from new_rows n join old_rows o on o.id = n.id
       where (n.cluster_id, n.allocatable_cpu_millicores,
              n.allocatable_memory_bytes, n.allocatable_pods,
              n.usage_cpu_millicores, n.usage_memory_bytes)
             is distinct from
             (o.cluster_id, o.allocatable_cpu_millicores,
              o.allocatable_memory_bytes, o.allocatable_pods,
              o.usage_cpu_millicores, o.usage_memory_bytes)
    loop
      perform k8s_refresh_node_totals(changed);
    end loop;
  else
    for changed in select distinct cluster_id from old_rows loop
      perform k8s_refresh_node_totals(changed);
    end loop;
  end if;
  return null;
end
$$;

create trigger k8s_nodes_rollups_insert after insert on k8s_nodes
  referencing new table as new_rows
  for each statement execute function k8s_nodes_rollups();
create trigger k8s_nodes_rollups_update after update on k8s_nodes
  referencing old table as old_rows new table as new_rows
  for each statement execute function k8s_nodes_rollups();
create trigger k8s_nodes_rollups_delete after delete on k8s_nodes
  referencing old table as old_rows
  for each statement execute function k8s_nodes_rollups();

-- Namespaces: the cluster's count; a new namespace's figures from the rows
-- of its name already stored (pods, workloads, services written before it
-- counted for no namespace row). A namespace's name is its key, which no
-- write changes: an update moves no figure.
create function k8s_namespaces_rollups() returns trigger
language plpgsql as $$
declare
  changed record;
begin
  if k8s_rollups_deferred() then return null; end if;
  if tg_op = 'INSERT' then
    for changed in
      select cluster_id, array_agg(name) as names, count(*) as n
        from new_rows group by cluster_id
    loop
      update clusters set namespace_count = namespace_count + changed.n
       where id = changed.cluster_id;
      -- The row starts at 0: what its name's stored rows give is added.
      perform k8s_add_pod_rollups(array(
        select k8s_pod_rollup(p, 1) from k8s_pods p
         where p.cluster_id = changed.cluster_id
           and p.namespace = any(changed.names)), true);
      update k8s_namespaces ns set
        workload_count = ns.workload_count
          + (select count(*) from k8s_workloads w
              where w.cluster_id = ns.cluster_id and w.namespace = ns.name),
        service_count = ns.service_count
          + (select count(*) from k8s_services s
              where s.cluster_id = ns.cluster_id and s.namespace = ns.name)
       where ns.cluster_id = changed.cluster_id
         and ns.name = any(changed.names);
    end loop;
  else
    update clusters c set namespace_count = c.namespace_count - d.n
      from (select cluster_id, count(*) as n from old_rows
             group by cluster_id) d
     where c.id = d.cluster_id;
  end if;
  return null;
end
$$;

create trigger k8s_namespaces_rollups_insert after insert on k8s_namespaces
  referencing new table as new_rows
  for each statement execute function k8s_namespaces_rollups();
create trigger k8s_namespaces_rollups_delete after delete on k8s_namespaces
  referencing old table as old_rows
  for each statement execute function k8s_namespaces_rollups();

-- Workloads and services: their namespace's count, and the cluster's
-- workload count. Their namespace is part of their key: an update moves
-- no count.
create type k8s_namespaced_rollup as (
  weight integer,
  cluster_id uuid,
  namespace text
);

create function k8s_namespaced_rollups() returns trigger
language plpgsql
set plan_cache_mode = force_generic_plan
as $$
declare
  workloads constant boolean := tg_table_name = 'k8s_workloads';
  changed k8s_namespaced_rollup[];
begin
  if k8s_rollups_deferred() then return null; end if;
  if tg_op = 'INSERT' then
    changed := array(select row(1, cluster_id, namespace)::k8s_namespaced_rollup
                       from new_rows);
  else
    changed := array(select row(-1, cluster_id, namespace)::k8s_namespaced_rollup
                       from old_rows);
  end if;
  with d as (
    select cluster_id, namespace, sum(weight) as n
      from unnest(changed) group by cluster_id, namespace
  )
  update k8s_namespaces ns set
    workload_count = ns.workload_count + case when workloads then d.n else 0 end,
    service_count = ns.service_count + case when workloads then 0 else d.n end
    from d
   where ns.cluster_id = d.cluster_id and ns.name = d.namespace;
  if workloads then
    update clusters c set workload_count = c.workload_count + d.n
      from (select cluster_id, sum(weight) as n
              from unnest(changed) group by cluster_id) d
     where c.id = d.cluster_id;
  end if;
  return null;
end
$$;

create trigger k8s_workloads_rollups_insert after insert on k8s_workloads
  referencing new table as new_rows
  for each statement execute function k8s_namespaced_rollups();
create trigger k8s_workloads_rollups_delete after delete on k8s_workloads
  referencing old table as old_rows
  for each statement execute function k8s_namespaced_rollups();
create trigger k8s_services_rollups_insert after insert on k8s_services
  referencing new table as new_rows
  for each statement execute function k8s_namespaced_rollups();
create trigger k8s_services_rollups_delete after delete on k8s_services
  referencing old table as old_rows
  for each statement execute function k8s_namespaced_rollups();

-- The figures as the full recompute gives them, the triggers' starting
-- point.
select k8s_refresh_rollups(id) from clusters;
