-- The cluster inventory: clusters (a CMDB asset each) and the 13 resource
-- kinds the cluster agent collects. Child rows cascade with their cluster and
-- namespace; the sync prunes in the spec's FK order, children first.
--
-- content_hash: a digest of the row as the agent last sent it, computed by
-- the sync. Comparing it lets a resync skip unchanged rows without writing
-- them (most rows of a 5-minute resync are unchanged).

create table clusters (
  id uuid primary key default gen_random_uuid(),
  asset_id uuid not null references assets (id) on delete cascade,
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid not null references environments (id) on delete cascade,
  -- The reporting agent; with the environment, what identifies a cluster.
  agent_id uuid not null,
  name text not null,
  display_name text,
  slug text not null,
  uid text,
  version text,
  platform text,
  distribution text,
  api_server_url text,
  cluster_cidr text,
  service_cidr text,
  dns_domain text,
  cloud_provider text,
  cloud_region text,
  cloud_account_id text,
  status text not null default 'unknown'
    check (status in ('healthy', 'degraded', 'unreachable', 'unknown')),
  agent_status text not null default 'connected'
    check (agent_status in ('connected', 'disconnected')),
  agent_version text,
  node_count integer not null default 0,
  namespace_count integer not null default 0,
  workload_count integer not null default 0,
  -- The last inventory message's timestamp (clamped to the backend clock).
  last_seen_at timestamptz,
  -- The snapshot time of the last applied inventory: an older one is skipped.
  last_snapshot_at timestamptz,
  -- What the agent said about its collection (exclusions, truncation).
  collection jsonb,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (environment_id, agent_id),
  unique (environment_id, slug)
);
create index idx_clusters_client on clusters (client_id);
create index idx_clusters_environment on clusters (environment_id);
create index idx_clusters_asset on clusters (asset_id);
create index idx_clusters_status on clusters (status);
create index idx_clusters_agent_status on clusters (agent_status);
create index idx_clusters_last_seen on clusters (last_seen_at);
create index idx_clusters_name on clusters (lower(name), id);

create table k8s_nodes (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  host_id uuid references hosts (id) on delete set null,
  name text not null,
  uid text,
  roles text[] not null default '{}',
  labels jsonb not null default '{}',
  taints jsonb not null default '[]',
  status text,
  conditions jsonb not null default '[]',
  unschedulable boolean,
  kubelet_version text,
  container_runtime text,
  os_image text,
  kernel_version text,
  capacity_cpu_millicores integer,
  capacity_memory_bytes bigint,
  capacity_pods integer,
  allocatable_cpu_millicores integer,
  allocatable_memory_bytes bigint,
  allocatable_pods integer,
  usage_cpu_millicores integer,
  usage_memory_bytes bigint,
  pod_count integer,
  addresses jsonb not null default '[]',
  provider_id text,
  instance_type text,
  zone text,
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, name),
  unique (cluster_id, uid)
);
create index idx_k8s_nodes_host on k8s_nodes (host_id);
create index idx_k8s_nodes_status on k8s_nodes (cluster_id, status);

create table k8s_namespaces (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  name text not null,
  uid text,
  status text,
  labels jsonb not null default '{}',
  workload_count integer not null default 0,
  pod_count integer not null default 0,
  service_count integer not null default 0,
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, name)
);
create index idx_k8s_namespaces_labels on k8s_namespaces using gin (labels);

create table k8s_workloads (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  -- No CHECK: a new kind needs no migration.
  kind text not null,
  name text not null,
  uid text,
  namespace text not null,
  replicas_desired integer,
  replicas_ready integer,
  replicas_available integer,
  conditions jsonb not null default '[]',
  strategy text,
  service_account text,
  containers jsonb not null default '[]',
  labels jsonb not null default '{}',
  annotations jsonb not null default '{}',
  helm_release text,
  helm_chart text,
  helm_chart_version text,
  -- The last known spec facts, the snapshot time they came from and their
  -- digest; kept when a sync carries none (absent means unknown).
  spec_facts jsonb,
  spec_facts_at timestamptz,
  spec_facts_hash text,
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, kind, namespace, name)
);
create index idx_k8s_workloads_namespace on k8s_workloads (namespace_id);
create index idx_k8s_workloads_kind on k8s_workloads (cluster_id, kind);
create index idx_k8s_workloads_labels on k8s_workloads using gin (labels);
create index idx_k8s_workloads_helm_release on k8s_workloads (cluster_id, helm_release)
  where helm_release is not null;

create table k8s_pods (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  node_id uuid references k8s_nodes (id) on delete set null,
  workload_id uuid references k8s_workloads (id) on delete set null,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  phase text,
  node_name text,
  pod_ip text,
  host_ip text,
  qos_class text,
  owner_kind text,
  owner_name text,
  workload_kind text,
  workload_name text,
  containers jsonb not null default '[]',
  restart_count integer,
  ready_containers integer,
  total_containers integer,
  -- Effective requests and limits (max of the init containers' and the sum of
  -- the others'), computed by the sync: sort keys and capacity sums.
  cpu_requests_millicores bigint,
  memory_requests_bytes bigint,
  cpu_limits_millicores bigint,
  memory_limits_bytes bigint,
  started_at timestamptz,
  pending_since timestamptz,
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_pods_namespace on k8s_pods (namespace_id);
create index idx_k8s_pods_phase on k8s_pods (cluster_id, phase);
create index idx_k8s_pods_node on k8s_pods (cluster_id, node_id);
create index idx_k8s_pods_workload on k8s_pods (cluster_id, workload_id);
create index idx_k8s_pods_restarts on k8s_pods (cluster_id, restart_count desc)
  where restart_count > 0;

create table k8s_services (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  type text,
  cluster_ip text,
  -- cluster_ip as a number when it is IPv4, for the numeric sort.
  cluster_ip_v4 bigint,
  cluster_ips text[] not null default '{}',
  external_ips text[] not null default '{}',
  load_balancer_ingress text[] not null default '{}',
  ports jsonb not null default '[]',
  selector jsonb,
  endpoint_count integer,
  annotations jsonb not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_services_namespace on k8s_services (namespace_id);

create table k8s_ingresses (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  ingress_class text,
  rules jsonb not null default '[]',
  tls jsonb not null default '[]',
  load_balancer text[] not null default '{}',
  annotations jsonb not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_ingresses_namespace on k8s_ingresses (namespace_id);

create table k8s_pvcs (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  phase text,
  storage_class text,
  capacity_bytes bigint,
  requested_bytes bigint,
  access_modes text[] not null default '{}',
  volume_name text,
  volume_mode text,
  annotations jsonb not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_pvcs_namespace on k8s_pvcs (namespace_id);

create table k8s_events (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  type text,
  reason text,
  message text,
  involved_kind text,
  involved_name text,
  involved_namespace text,
  involved_uid text,
  count integer,
  first_seen timestamptz,
  last_seen timestamptz,
  source_component text,
  reporting_controller text,
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_events_namespace on k8s_events (namespace_id);
create index idx_k8s_events_last_seen on k8s_events (cluster_id, last_seen desc);
create index idx_k8s_events_type_last_seen on k8s_events (cluster_id, type, last_seen desc);
-- The retention sweep reads across clusters by age.
create index idx_k8s_events_expiry on k8s_events (last_seen);

create table k8s_jobs (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  kind text not null,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  schedule text,
  suspend boolean,
  active integer,
  succeeded integer,
  failed integer,
  completions integer,
  parallelism integer,
  start_time timestamptz,
  completion_time timestamptz,
  last_schedule_time timestamptz,
  status text,
  owner_cronjob text,
  containers jsonb not null default '[]',
  annotations jsonb not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, kind, namespace, name)
);
create index idx_k8s_jobs_namespace on k8s_jobs (namespace_id);
create index idx_k8s_jobs_kind on k8s_jobs (cluster_id, kind);

create table k8s_hpas (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  target_kind text,
  target_name text,
  target_api_version text,
  min_replicas integer,
  max_replicas integer,
  current_replicas integer,
  desired_replicas integer,
  metrics jsonb not null default '[]',
  conditions jsonb not null default '[]',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_hpas_namespace on k8s_hpas (namespace_id);

create table k8s_network_policies (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  pod_selector jsonb,
  policy_types text[] not null default '{}',
  ingress jsonb not null default '[]',
  egress jsonb not null default '[]',
  annotations jsonb not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_network_policies_namespace on k8s_network_policies (namespace_id);

create table k8s_resource_quotas (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  hard jsonb not null default '{}',
  used jsonb not null default '{}',
  scopes text[] not null default '{}',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_resource_quotas_namespace on k8s_resource_quotas (namespace_id);

create table k8s_endpoint_slices (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  namespace_id uuid references k8s_namespaces (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  labels jsonb not null default '{}',
  service_name text,
  address_type text,
  endpoints jsonb not null default '[]',
  ports jsonb not null default '[]',
  created_at timestamptz,
  updated_at timestamptz not null default now(),
  content_hash text not null,
  unique (cluster_id, namespace, name)
);
create index idx_k8s_endpoint_slices_namespace on k8s_endpoint_slices (namespace_id);
create index idx_k8s_endpoint_slices_service on k8s_endpoint_slices (cluster_id, service_name);
