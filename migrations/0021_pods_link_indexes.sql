-- A pruned workload or node sets its pods' link to null (ON DELETE SET NULL):
-- PostgreSQL looks the pods up by `workload_id = $1` (or `node_id = $1`)
-- alone, which the (cluster_id, workload_id) and (cluster_id, node_id)
-- indexes serve only by reading all of them, every cluster's pods, once per
-- pruned row (3-5 ms each for two large clusters, growing with the fleet).
-- Led by the link, the index serves that lookup and the node's and
-- workload's pods lists alike (`cluster_id = $1 and node_id = $2`: a link
-- points into its own cluster, so cluster_id only filters what it finds).
drop index idx_k8s_pods_node;
drop index idx_k8s_pods_workload;
create index idx_k8s_pods_node on k8s_pods (node_id);
create index idx_k8s_pods_workload on k8s_pods (workload_id);
