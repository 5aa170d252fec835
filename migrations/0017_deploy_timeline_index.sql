-- The what-changed timeline's deploys: a client's deploy rows newest first.
-- With only idx_change_events_client_effective and idx_change_events_source
-- the planner ANDs a client's window with every deploy of every client (a
-- bitmap of all of them: 35-58 ms at 500k rows); this partial index holds
-- just the deploys in the order the timeline reads them (about 2 ms).
create index idx_change_events_deploys
  on change_events (client_id, (coalesce(scanned_at, created_at)) desc, id desc)
  where source = 'deployment';
