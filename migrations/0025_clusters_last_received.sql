-- When the backend last received a snapshot of the cluster, by the
-- database's own clock: the sync stamps it as it locks the cluster row
-- (shared/sync/repo.ts lockCluster), applied or not. The stale-cluster sweep
-- judges silence by it, so an agent whose clock runs behind is not marked
-- disconnected after every sync; last_seen_at stays the snapshot's own time
-- (the spec), which the API shows. Null until the first sync after this
-- migration: the sweep then ages the row from its last write.
alter table clusters add column last_received_at timestamptz;

-- A connected cluster's last write was its last applied sync (the sweep
-- writes only the rows it disconnects).
update clusters set last_received_at = updated_at where last_seen_at is not null;
