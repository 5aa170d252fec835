-- Room on each heap page for the kinds whose resync updates touch no indexed
-- column, so those updates are HOT: the new row version goes on the same
-- page and no index gets a new entry (nor, after a checkpoint, a full-page
-- image of the leaf it would have gone into). Packed full by the first
-- sync's COPY and inserts, these tables had no room: in the steady ingest
-- bench only 23% of service and endpoint-slice updates, 25% of node
-- updates and 58% of namespace updates were HOT, every other one writing a
-- new entry into each of the table's 3 to 4 btrees.
--
-- What moves on them between resyncs is not indexed: a node's usage (every
-- node, every resync, as metrics-server's figures move), a namespace's pod
-- counts (the rollups, at most resyncs), a service's endpoint count, an
-- endpoint slice's endpoints, a PVC's or quota's status, an HPA's replicas,
-- a job's counts. Nodes and namespaces, most of whose rows change at a
-- resync, keep half of each page free: room for a new version of every row
-- on it (a node's row is ~2 KB, a namespace's ~0.7 KB); a cluster has few
-- of them. The others, of which a resync changes a few rows, keep a fifth:
-- at least one new version of a typical row (~0.5-1.4 KB). A page's dead
-- versions are pruned when it fills, so the room is reused.
--
-- Left full: pods and events (every update changes an indexed column:
-- phase, restarts, the digest the pods' key carries, an event's
-- last-seen), workloads (readiness is in the not-ready index), clusters
-- (last_seen_at is indexed).
--
-- fillfactor takes a SHARE UPDATE EXCLUSIVE lock (reads and writes go on)
-- and applies to pages filled from now on; existing pages keep their rows
-- until they are pruned or rewritten.

alter table k8s_nodes set (fillfactor = 50);
alter table k8s_namespaces set (fillfactor = 50);
alter table k8s_services set (fillfactor = 80);
alter table k8s_endpoint_slices set (fillfactor = 80);
alter table k8s_pvcs set (fillfactor = 80);
alter table k8s_hpas set (fillfactor = 80);
alter table k8s_jobs set (fillfactor = 80);
alter table k8s_resource_quotas set (fillfactor = 80);
alter table k8s_network_policies set (fillfactor = 80);
alter table k8s_ingresses set (fillfactor = 80);
