/**
 * The one Metrics instance: the spec's Prometheus metric names as EMF metrics
 * in the namespace `K8sInventory`. Locally they are EMF lines in the log.
 */
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

export { MetricUnit };

export const metrics = new Metrics({
  namespace: 'K8sInventory',
  serviceName: 'k8s-inventory',
});

/** Metric names, spelled once. */
export const MetricName = {
  clustersSynced: 'proxima_k8s_clusters_synced_total',
  syncDuration: 'proxima_k8s_sync_duration_seconds',
  nodesSynced: 'proxima_k8s_nodes_synced_total',
  workloadsSynced: 'proxima_k8s_workloads_synced_total',
  nodeHostLinkage: 'proxima_k8s_node_host_linkage_total',
  specFactsNotNewer: 'proxima_k8s_spec_facts_not_newer_total',
  snapshotsSkipped: 'proxima_k8s_snapshots_skipped_total',
  ingestRejections: 'proxima_k8s_ingest_rejections_total',
  /** Rows of one snapshot sharing a key with an earlier row (dimension kind). */
  duplicateRows: 'proxima_k8s_snapshot_duplicate_rows_total',
  staleClustersMarked: 'proxima_k8s_stale_clusters_marked_total',
  eventsExpired: 'proxima_k8s_events_expired_total',
  changeRecordsWritten: 'proxima_k8s_change_records_total',
  bridgeForwarded: 'proxima_k8s_bridge_forwarded_total',
  bridgeClaimChecked: 'proxima_k8s_bridge_claim_checked_total',
  bridgeRejected: 'proxima_k8s_bridge_rejected_total',
  bridgeSendFailures: 'proxima_k8s_bridge_send_failures_total',
  bridgeConsumerLag: 'proxima_k8s_bridge_consumer_lag',
  rateLimiterFailures: 'proxima_k8s_rate_limiter_failures_total',
  metricsSeriesWritten: 'proxima_k8s_metrics_series_written_total',
  metricsWriteFailures: 'proxima_k8s_metrics_write_failures_total',
} as const;
