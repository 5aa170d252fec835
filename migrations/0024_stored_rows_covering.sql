-- Every sync first reads, under the cluster's lock, each stored row's id,
-- key and digest (shared/sync/repo.ts, listStoredRows). For pods, most of a
-- cluster's rows, that read visited every heap page of the cluster's pods
-- (a pod row is ~2 KB: ~600-700 pages for 2,000 pods) to take ~100 bytes
-- from each. Their unique key, which the upsert's ON CONFLICT and the pods
-- list's usual order already use, now also carries the id and the digest,
-- so the read is an index-only scan of it: ~55 buffers for 2,000 pods on
-- all-visible pages. Pages whose pods changed since the last vacuum are
-- still visited, one heap fetch per pod on them.
--
-- Pods only: no pod update is HOT (each one changes an indexed column), so
-- an update writes a new entry into this index anyway, and the included
-- columns make it ~65 bytes wider (WAL of a 2,000-pod insert +3.7%, of 40
-- pod updates +1.6%). Other kinds' rows are fewer and smaller, and most of
-- their updates are HOT, which an index on content_hash (changed by every
-- update) would end. Events are left out: a medium cluster's 400 take 25
-- heap pages (their key with these columns ~10), a saving of ~15 buffers at
-- best, less as their pages stop being all-visible (events are added, aged
-- out and counted up all the time).

alter table k8s_pods
  drop constraint k8s_pods_cluster_id_namespace_name_key,
  add constraint k8s_pods_cluster_id_namespace_name_key
    unique (cluster_id, namespace, name) include (id, content_hash);
