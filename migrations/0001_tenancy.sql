-- Tenancy the rest of the platform owns: kept minimal, but real.

create extension if not exists pgcrypto;

create table clients (
  id uuid primary key default gen_random_uuid(),
  slug text not null unique,
  name text not null,
  created_at timestamptz not null default now()
);

create table environments (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references clients (id) on delete cascade,
  slug text not null,
  name text not null,
  created_at timestamptz not null default now(),
  unique (client_id, slug)
);

create table hosts (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete set null,
  hostname text not null,
  ip_address inet,
  created_at timestamptz not null default now()
);
create index idx_hosts_client on hosts (client_id);
create index idx_hosts_environment_hostname on hosts (environment_id, lower(hostname));
create index idx_hosts_environment_ip on hosts (environment_id, ip_address);

create table assets (
  id uuid primary key default gen_random_uuid(),
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete set null,
  asset_type text not null,
  name text not null,
  status text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index idx_assets_client on assets (client_id);
create index idx_assets_environment on assets (environment_id);
create index idx_assets_type on assets (asset_type);

-- Who may read what: a role granted to a user on a client, optionally
-- narrowed to one environment of it. Roles are defined in code
-- (shared/auth/roles.ts); the check constraint keeps stored names valid.
create table user_grants (
  id uuid primary key default gen_random_uuid(),
  email text not null,
  role text not null check (role in ('viewer', 'operator', 'admin', 'super_admin')),
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid references environments (id) on delete cascade,
  created_at timestamptz not null default now()
);
create unique index uq_user_grants
  on user_grants (lower(email), role, client_id, coalesce(environment_id, '00000000-0000-0000-0000-000000000000'::uuid));
create index idx_user_grants_email on user_grants (lower(email));
