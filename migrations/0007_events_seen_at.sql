-- An event's time, defined once for the 24-hour events list and the
-- retention sweep: last seen, else first seen, else created, else when the
-- backend last wrote the row. An agent older than v0.8.0 reports
-- events.k8s.io events (FailedScheduling, Scheduled, ...) with no last-seen
-- time; the list filtered on last_seen alone, so those events were kept but
-- never listed, while the spec lists them.
--
-- The sweep deleted by this same coalesce, which no index served (the old
-- expiry index is on last_seen): it read every event of every cluster. Both
-- now read seen_at through an index. The past hour's warning counts stay on
-- last_seen (idx_k8s_events_type_last_seen), as the spec defines them.

alter table k8s_events
  add column seen_at timestamptz
  generated always as (coalesce(last_seen, first_seen, created_at, updated_at)) stored;

drop index idx_k8s_events_last_seen;
create index idx_k8s_events_seen on k8s_events (cluster_id, seen_at desc);

drop index idx_k8s_events_expiry;
create index idx_k8s_events_expiry on k8s_events (seen_at);
