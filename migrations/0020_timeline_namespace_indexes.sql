-- The what-changed timeline's namespace and workload views. Each source read
-- a client's (or a cluster's) whole window and dropped the other namespaces
-- row by row: at 500k change rows and 200k alert groups a 30-day namespace
-- view visited about 1,200 recorded changes, 1,000 deploys and 1,300 alert
-- groups (one heap page each) to keep about 60 of each. These indexes lead
-- with the namespace so the view visits only its own rows.

-- Recorded changes of one cluster's namespace, newest first.
create index idx_change_events_cluster_namespace
  on change_events ((details ->> 'cluster_id'), (details ->> 'namespace'),
                    (coalesce(scanned_at, created_at)) desc)
  where source = 'k8s-config';

-- Deploys: those of apps Console does not know are matched by their
-- destination namespace, the others by their Application's name; the
-- timeline ORs the two (shared/changes/what-changed.ts).
create index idx_change_events_deploys_namespace
  on change_events (client_id, (details ->> 'namespace'),
                    (coalesce(scanned_at, created_at)) desc)
  where source = 'deployment';
create index idx_change_events_deploys_app
  on change_events (client_id, (details ->> 'app_name'),
                    (coalesce(scanned_at, created_at)) desc)
  where source = 'deployment';

-- Alert groups: a group matches a namespace when one of its alerts carries
-- the namespace label, so its keys are `client_id/namespace` for each
-- namespace of its alerts (the client first, so that a namespace every
-- client has, such as default, is one client's list, not everyone's).
create function alert_group_namespace_keys(client_id uuid, alert_labels jsonb)
returns text[]
language sql immutable parallel safe
return array(
  select distinct client_id::text || '/' || (a ->> 'namespace')
  from jsonb_array_elements(
         case when jsonb_typeof(alert_labels) = 'array' then alert_labels
              else '[]'::jsonb end) as a
  where a ->> 'namespace' <> '');

create index idx_alert_groups_namespace_keys
  on alert_groups using gin (alert_group_namespace_keys(client_id, alert_labels));
