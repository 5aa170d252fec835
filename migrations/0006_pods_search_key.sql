-- The pods search compares a stored, already lowercased key instead of
-- folding case row by row. `name ilike p or namespace ilike p` lowercases
-- both columns of every one of the cluster's pods on every search (in a
-- UTF-8 database, ILIKE is lower(value) LIKE lower(pattern)); that was most
-- of a search's time. The key holds the same two lowercased values, so
-- `search_key like lower(p)` finds exactly the same rows: they are joined
-- by a newline, and a search text never holds a control character (the
-- API refuses it), so a match cannot span the two.
--
-- The covering index the pods list pages through carries the key, so a
-- search still reads no heap page to find its matches.

alter table k8s_pods
  add column search_key text
  generated always as (lower(namespace) || E'\n' || lower(name)) stored;

drop index idx_k8s_pods_list;
create index idx_k8s_pods_list on k8s_pods (cluster_id)
  include (namespace, name, id, phase, ready_containers, restart_count,
           cpu_requests_millicores, memory_requests_bytes, node_name,
           started_at, created_at, node_id, workload_id, search_key);
