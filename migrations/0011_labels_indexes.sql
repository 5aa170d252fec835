-- The lists' labels filter (labels @> and ?&) reads a GIN index on every list
-- whose records carry labels: workloads had one (0002), pods and jobs get theirs.
create index idx_k8s_pods_labels on k8s_pods using gin (labels);
create index idx_k8s_jobs_labels on k8s_jobs using gin (labels);
