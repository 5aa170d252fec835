-- When the backend last applied a snapshot of the cluster, by the
-- database's own clock: the sync stamps it with now() as it writes the
-- cluster row (shared/sync/repo.ts updateClusterAndAsset). The stale-cluster
-- sweep judges silence by it, so an agent whose clock runs behind is not
-- marked disconnected after every sync; last_seen_at stays the snapshot's
-- own time (the spec), which the API shows. Null until the cluster's first
-- sync after this migration: the sweep then ages the row from its creation.
alter table clusters add column last_received_at timestamptz;

-- A connected cluster's last write was its last applied sync (the sweep
-- writes only the rows it disconnects).
update clusters set last_received_at = updated_at where last_seen_at is not null;
