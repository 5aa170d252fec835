-- Change records (the platform's change feed) and refused ingest messages.

create table change_events (
  id uuid primary key default gen_random_uuid(),
  source text not null,
  event_type text not null,
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete cascade,
  host_id uuid references hosts (id) on delete set null,
  -- When the change was observed (for k8s-config: the snapshot's time).
  scanned_at timestamptz,
  severity text not null default 'info',
  summary text not null,
  details jsonb not null default '{}',
  created_at timestamptz not null default now()
);
-- "Effective time" is the observed time, else the row's creation.
create index idx_change_events_client_effective
  on change_events (client_id, (coalesce(scanned_at, created_at)) desc);
create index idx_change_events_source on change_events (source);
create index idx_change_events_cluster
  on change_events (((details ->> 'cluster_id')), (coalesce(scanned_at, created_at)) desc)
  where source = 'k8s-config';

-- Every refused inventory message: where it came from and why, never its
-- payload. Kept for inspection; counted on proxima_k8s_ingest_rejections_total.
create table ingest_rejections (
  id uuid primary key default gen_random_uuid(),
  received_at timestamptz not null default now(),
  -- bridge (bad subject) or sync (bad body, unknown tenant, ...)
  stage text not null check (stage in ('bridge', 'sync')),
  subject text not null,
  stream_seq bigint,
  client_slug text,
  env_slug text,
  agent_id text,
  reason text not null,
  size_bytes integer
);
create index idx_ingest_rejections_received on ingest_rejections (received_at desc);
