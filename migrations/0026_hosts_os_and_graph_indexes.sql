-- Hosts carry the OS their inventory reports (name and version as given,
-- e.g. "Ubuntu 22.04"): PQL's host.os reads it. Nullable: a host added
-- without it is simply unknown.
alter table hosts add column os text;

-- A Job's pods are found by their direct owner (a CronJob's jobs' pods have
-- the CronJob as top controller, so workload_id does not reach the Job).
-- Partial: only Job-owned pods, a small share of the table.
create index idx_k8s_pods_job_owner
  on k8s_pods (cluster_id, namespace, owner_name) where owner_kind = 'Job';

-- A CronJob's jobs, by the name of the CronJob that made them.
create index idx_k8s_jobs_owner_cronjob
  on k8s_jobs (cluster_id, namespace, owner_cronjob) where owner_cronjob is not null;

-- The hosts list and PQL read a page of hosts by hostname: an ordered scan
-- of this index stops at the page's end, however many hosts the scope holds
-- (the scope and the expression filter what it reads); a sort would take
-- every match first (360 ms for 100k hosts under a load of 18).
create index idx_hosts_hostname on hosts (lower(hostname), id);

-- From an object to the Argo CD applications whose resource list names it:
-- the primary key leads with the application, so this lookup needs its own.
create index idx_argocd_application_resources_object
  on argocd_application_resources (kind, namespace, name);
