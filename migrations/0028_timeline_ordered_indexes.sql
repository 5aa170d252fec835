-- The what-changed timeline's reads keep each source's newest rows up to a
-- cap. Their indexes did not hold the whole order (time, then id), or led
-- with the client where the read keeps one environment's rows, so a read
-- fetched every row of its window (one heap page each) and sorted them to
-- keep the newest 100 or 200: a cost that grows with the window's rows,
-- which for deploys and alert groups were the whole client's, every cluster
-- of it. With these the read walks an index newest first and stops at the
-- cap (shared/changes/what-changed.ts).

-- Recorded changes of one cluster, newest first (the order of the timeline
-- and of the change feed); replaces the index without the id.
create index idx_change_events_cluster_ordered
  on change_events ((details ->> 'cluster_id'),
                    (coalesce(scanned_at, created_at)) desc, id desc)
  where source = 'k8s-config';
drop index idx_change_events_cluster;

-- Deploys of one environment, and the client-wide ones (no environment) of
-- a client, newest first; they replace the client's (migrations/0017),
-- which only the timeline read.
create index idx_change_events_deploys_environment
  on change_events (environment_id, (coalesce(scanned_at, created_at)) desc, id desc)
  where source = 'deployment';
create index idx_change_events_deploys_client_wide
  on change_events (client_id, (coalesce(scanned_at, created_at)) desc, id desc)
  where source = 'deployment' and environment_id is null;
drop index idx_change_events_deploys;

-- Alert groups the same way; they replace the client's (migrations/0015),
-- which only the timeline read.
create index idx_alert_groups_environment
  on alert_groups (environment_id, first_fired_at desc, id desc);
create index idx_alert_groups_client_wide
  on alert_groups (client_id, first_fired_at desc, id desc)
  where environment_id is null;
drop index idx_alert_groups_client;

-- An environment belongs to one client and a cluster to one environment,
-- but the planner multiplies the selectivities of `client_id = $c and
-- environment_id = $e` (and of the cluster's id besides), so it took an
-- environment's 300 rows of a week for 6 and sorted them all rather than
-- walk the index above to the cap. These tell it the columns depend on
-- each other.
create statistics st_change_events_client_environment (dependencies)
  on client_id, environment_id from change_events;
create statistics st_change_events_cluster (dependencies)
  on (details ->> 'cluster_id'), client_id, environment_id from change_events;
create statistics st_alert_groups_client_environment (dependencies)
  on client_id, environment_id from alert_groups;
analyze change_events, alert_groups;

-- The namespace keys of alert groups (migrations/0020): with GIN's fast
-- update, new keys wait in a pending list that every search reads whole
-- until a vacuum merges it, up to gin_pending_list_limit (4 MB): at 200k
-- groups a namespace view spent 8 ms of its 9 reading about 440 pending
-- pages. Groups are written a few at a time by the webhook, so each write
-- updating the index directly costs little.
alter index idx_alert_groups_namespace_keys set (fastupdate = off);
select gin_clean_pending_list('idx_alert_groups_namespace_keys');
