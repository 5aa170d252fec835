-- The 14-day copy of Kubernetes events (the spec's VictoriaLogs store, kept
-- in PostgreSQL: docs/decisions.md), and the API's rate-limit counters.

-- One row per sighting of a distinct event: an unchanged event synced again
-- is the same row (the primary key collapses it at write time), a count
-- change is a new row. seen_at is the event's last-seen time at that sync.
-- Partitioned by day so retention drops whole partitions instead of
-- deleting millions of rows; partitions are made ahead by
-- k8s_event_history_ensure_partitions (called below, by every retention
-- sweep and before a sync that needs a day not made yet).
--
-- Names compare in "C" order: the workload read asks for names equal to a
-- workload's or starting with `<workload>-`, a range scan only byte order
-- gives an index for.
create table k8s_event_history (
  cluster_id uuid not null references clusters (id) on delete cascade,
  seen_at timestamptz not null,
  namespace text collate "C" not null,
  involved_kind text,
  involved_name text collate "C",
  type text,
  reason text,
  count integer,
  message text,
  -- The id the events timeline and the what-changed timeline both show.
  content_id text not null,
  primary key (cluster_id, seen_at, content_id)
) partition by range (seen_at);

-- The three reads: a cluster's window (the primary key), a reason filter,
-- and a workload's names within a namespace.
create index idx_k8s_event_history_reason
  on k8s_event_history (cluster_id, reason, seen_at desc);
create index idx_k8s_event_history_object
  on k8s_event_history (cluster_id, namespace, involved_name, seen_at desc);

-- `event:` + 16 hex digits of a SHA-256 over the sighting's fields, times
-- in UTC to the microsecond. Defined once, here.
create function k8s_event_content_id(
  seen_at timestamptz,
  namespace text,
  involved_kind text,
  involved_name text,
  type text,
  reason text,
  count integer,
  message text
) returns text
language sql immutable parallel safe
as $$
  select 'event:' || left(encode(sha256(convert_to(concat_ws(e'\x1f',
    to_char(seen_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'),
    coalesce(namespace, ''), coalesce(involved_kind, ''),
    coalesce(involved_name, ''), coalesce(type, ''), coalesce(reason, ''),
    coalesce(count::text, ''), coalesce(message, '')), 'UTF8')), 'hex'), 16)
$$;

-- Makes the daily partitions of [first_day, last_day] that do not exist
-- yet; returns how many it made. SECURITY DEFINER: making a partition
-- takes the table owner, and the sync and the sweep run as their own roles. Partition k8s_event_history_pYYYYMMDD
-- holds [day, day + 1) in UTC.
create function k8s_event_history_ensure_partitions(first_day date, last_day date)
returns integer
language plpgsql
security definer
set search_path = public, pg_temp
as $$
declare
  day date := first_day;
  made integer := 0;
  part text;
begin
  while day <= last_day loop
    part := 'k8s_event_history_p' || to_char(day, 'YYYYMMDD');
    if to_regclass(part) is null then
      execute format(
        'create table %I partition of k8s_event_history for values from (%L) to (%L)',
        part,
        (day::timestamp at time zone 'UTC'),
        ((day + 1)::timestamp at time zone 'UTC'));
      made := made + 1;
    end if;
    day := day + 1;
  end loop;
  return made;
end
$$;

-- Drops the partitions of days before first_kept (whole days past
-- retention); returns how many it dropped.
create function k8s_event_history_drop_partitions(first_kept date)
returns integer
language plpgsql
security definer
set search_path = public, pg_temp
as $$
declare
  part record;
  dropped integer := 0;
begin
  for part in
    select c.relname
    from pg_inherits i
    join pg_class c on c.oid = i.inhrelid
    where i.inhparent = 'k8s_event_history'::regclass
      and c.relname ~ '^k8s_event_history_p[0-9]{8}$'
      and to_date(substr(c.relname, 20), 'YYYYMMDD') < first_kept
  loop
    execute format('drop table %I', part.relname);
    dropped := dropped + 1;
  end loop;
  return dropped;
end
$$;

-- Only the roles shared/db/roles.ts grants it to may run them.
revoke execute on function k8s_event_history_ensure_partitions(date, date) from public;
revoke execute on function k8s_event_history_drop_partitions(date) from public;

-- The default window (14 days) and the next few days, so a fresh database
-- takes a snapshot carrying events up to 14 days old.
select k8s_event_history_ensure_partitions(
  (now() at time zone 'UTC')::date - 15,
  (now() at time zone 'UTC')::date + 3);

-- Rate limits per caller and route family, counted here so they hold
-- across every API instance. One row per (subject, family): a fixed window
-- that starts with the first call after the last one ended. Unlogged: the
-- counters need no crash safety (a crash forgets at most a minute), and
-- their writes cost no WAL.
create unlogged table api_rate_limits (
  subject text not null,
  family text not null,
  window_start timestamptz not null,
  hits integer not null,
  primary key (subject, family)
);
-- The retention sweep deletes windows that ended long ago.
create index idx_api_rate_limits_window on api_rate_limits (window_start);
