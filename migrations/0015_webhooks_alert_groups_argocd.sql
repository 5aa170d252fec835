-- What changed: the webhook sources that feed deploys (Argo CD notifications)
-- and alert groups (Alertmanager), the alert groups themselves, and the Argo
-- CD Applications the agents report.

-- A source is one sender (an Argo CD or an Alertmanager) of one client,
-- optionally pinned to one environment (NULL: client-wide). Its secret is a
-- 256-bit random value shown once; only its SHA-256 is kept, which is enough
-- for a secret of that entropy (nothing to brute-force) and lets the check
-- run in constant time.
create table webhook_sources (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete cascade,
  kind text not null check (kind in ('argocd', 'alertmanager')),
  secret_sha256 bytea not null check (length(secret_sha256) = 32),
  created_at timestamptz not null default now(),
  disabled_at timestamptz
);
create index idx_webhook_sources_client on webhook_sources (client_id);

-- Argo CD retries a notification on 5xx and network errors: a replay carries
-- the same key (source, app, trigger, revision, finish time) and is stored
-- once. Other change rows have none.
alter table change_events add column dedup_key text;
create unique index uq_change_events_dedup
  on change_events (client_id, dedup_key) where dedup_key is not null;
-- The retention sweep deletes by effective time, client by client, through
-- idx_change_events_client_effective; no other index is needed.

-- One row per (source, groupKey, firing episode). At most one episode of a
-- group is open (firing) at a time; a resolved group that fires again opens
-- a new row.
create table alert_groups (
  id uuid primary key default gen_random_uuid(),
  source_id uuid not null references webhook_sources (id) on delete cascade,
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete cascade,
  host_id uuid references hosts (id) on delete set null,
  group_key text not null,
  status text not null check (status in ('firing', 'resolved')),
  severity text,
  title text not null,
  detail text,
  -- The group's common labels; alert_labels holds each alert's own set
  -- (common labels included), which the what-changed timeline matches.
  labels jsonb not null default '{}',
  alert_labels jsonb not null default '[]',
  first_fired_at timestamptz not null,
  resolved_at timestamptz,
  last_notified_at timestamptz not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create unique index uq_alert_groups_open
  on alert_groups (source_id, group_key) where status = 'firing';
create index idx_alert_groups_episodes
  on alert_groups (source_id, group_key, first_fired_at desc);
create index idx_alert_groups_client on alert_groups (client_id, first_fired_at desc);
create index idx_alert_groups_status on alert_groups (status, first_fired_at desc);
-- The retention sweep: groups whose last write is past retention.
create index idx_alert_groups_updated on alert_groups (updated_at);

-- Argo CD Applications as the agent of the cluster Argo CD runs in reports
-- them (wire v1.1), without any values. mapped_cluster_id is the cluster the
-- Application deploys to: the one of the same client whose api_server_url is
-- its destination server, or the reporting cluster for
-- https://kubernetes.default.svc; NULL when none is known.
create table argocd_applications (
  id uuid primary key default gen_random_uuid(),
  cluster_id uuid not null references clusters (id) on delete cascade,
  client_id uuid not null references clients (id) on delete cascade,
  namespace text not null,
  name text not null,
  uid text,
  project text,
  destination_server text,
  destination_name text,
  destination_namespace text,
  repo_url text,
  source_path text,
  chart text,
  target_revision text,
  sync_status text,
  health_status text,
  revision text,
  operation jsonb,
  mapped_cluster_id uuid references clusters (id) on delete set null,
  content_hash text not null,
  updated_at timestamptz not null default now(),
  unique (cluster_id, namespace, name)
);
create index idx_argocd_applications_client_name on argocd_applications (client_id, name);
create index idx_argocd_applications_mapped on argocd_applications (mapped_cluster_id);

create table argocd_application_resources (
  application_id uuid not null references argocd_applications (id) on delete cascade,
  api_group text not null default '',
  kind text not null,
  namespace text not null default '',
  name text not null,
  primary key (application_id, api_group, kind, namespace, name)
);
