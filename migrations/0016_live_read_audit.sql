-- Every live read (manifest, revisions, logs through the cluster's agent) is
-- recorded here: who asked, of which cluster, for which object or pod and
-- container, when, how it ended and how many bytes were returned. Never what
-- was read: no log text, no object content, no error message (an agent's
-- message can quote what it read).
--
-- A row is written before the agent is asked (outcome 'pending') and
-- completed after: a read whose row cannot be written is refused, and a
-- process that dies mid-read still leaves the attempt behind.
--
-- The tenant columns are copied from the cluster at the time of the read,
-- so the audit trail of a cluster outlives the cluster row (cluster_id is
-- set null on delete, its name kept); a deleted client or environment takes
-- its audit rows with it, like the rest of its data.
--
-- The gates need nothing new on clusters: agent_id (not null: a cluster row
-- exists only because its agent reported), agent_version (the last
-- inventory's), agent_status and last_seen_at are already there.

create table live_read_audit (
  id bigint generated always as identity primary key,
  at timestamptz not null default now(),
  -- The kube_query request's id, as the agent logs it.
  request_id uuid not null,
  client_id uuid not null references clients (id) on delete cascade,
  environment_id uuid not null references environments (id) on delete cascade,
  cluster_id uuid references clusters (id) on delete set null,
  cluster_name text not null,
  agent_id uuid not null,
  -- The caller: the JWT subject always, the email when the token has one,
  -- and the actor string sent to the agent.
  subject text not null,
  email text,
  actor text not null,
  route text not null check (route in ('manifest', 'revisions', 'logs')),
  kind text,
  namespace text,
  name text,
  pod text,
  container text,
  previous boolean,
  since_time timestamptz,
  -- 'pending' until the read ends; then 'ok' or the response's error code.
  outcome text not null,
  status smallint,
  duration_ms integer,
  bytes integer,
  check (outcome = 'pending' or (status is not null and duration_ms is not null and bytes is not null))
);

-- The audit list reads newest first within the caller's scope, optionally
-- narrowed to a cluster or a user; the retention sweep deletes by time.
create index idx_live_read_audit_scope on live_read_audit (client_id, environment_id, at desc, id desc);
create index idx_live_read_audit_cluster on live_read_audit (cluster_id, at desc, id desc);
create index idx_live_read_audit_email on live_read_audit (lower(email), at desc, id desc);
create index idx_live_read_audit_at on live_read_audit (at);
