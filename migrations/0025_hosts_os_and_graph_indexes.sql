-- Hosts carry the OS their inventory reports (name and version as given,
-- e.g. "Ubuntu 22.04"): PQL's host.os reads it. Nullable: a host added
-- without it is simply unknown.
alter table hosts add column os text;

-- The relations graph (shared/graph/) walks from a pod to the endpoint
-- slices that target it: `endpoints @> '[{"target_ref":{"kind":"Pod","name":…}}]'`.
-- Without an index that is every slice of the cluster read and unnested;
-- jsonb_path_ops is the smaller GIN and serves @> only, the one operator used.
create index idx_k8s_endpoint_slices_endpoints
  on k8s_endpoint_slices using gin (endpoints jsonb_path_ops);

-- A Job's pods are found by their direct owner (a CronJob's jobs' pods have
-- the CronJob as top controller, so workload_id does not reach the Job).
-- Partial: only Job-owned pods, a small share of the table.
create index idx_k8s_pods_job_owner
  on k8s_pods (cluster_id, namespace, owner_name) where owner_kind = 'Job';

-- A CronJob's jobs, by the name of the CronJob that made them.
create index idx_k8s_jobs_owner_cronjob
  on k8s_jobs (cluster_id, namespace, owner_cronjob) where owner_cronjob is not null;

-- The hosts list and PQL page hosts by hostname inside a tenant scope.
create index idx_hosts_client_hostname on hosts (client_id, lower(hostname), id);

-- From an object to the Argo CD applications whose resource list names it:
-- the primary key leads with the application, so this lookup needs its own.
create index idx_argocd_application_resources_object
  on argocd_application_resources (kind, namespace, name);
