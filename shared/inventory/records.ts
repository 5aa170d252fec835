/**
 * The records the inventory routes return, one zod schema per table.
 *
 * A record is the table's columns, snake_case as stored, minus the sync's
 * internal bookkeeping: content_hash (every table), spec_facts_hash
 * (workloads), cluster_ip_v4 (services: a sort helper derived from
 * cluster_ip) and search_key (pods: what q is matched against). The schema's keys are also the list of columns the store
 * selects, so the shape and the SQL cannot drift apart. Timestamps are
 * RFC 3339 strings (or null); jsonb columns are returned as stored.
 */
import { sanitizeMessage } from '../sanitize/secrets.ts';
import * as z from '../zod.ts';

const id = z.string();
const optionalId = z.nullable(z.string());
const text = z.nullable(z.string());
const count = z.nullable(z.number());
const flag = z.nullable(z.boolean());
const texts = z.array(z.string());
const jsonObject = z.record(z.string(), z.unknown());
const optionalJsonObject = z.nullable(jsonObject);
const jsonArray = z.array(z.unknown());
const time = z.pipe(
  z.nullable(z.date()),
  z.transform((value) => (value === null ? null : value.toISOString())),
);
const requiredTime = z.pipe(
  z.date(),
  z.transform((value) => value.toISOString()),
);
/** Secret-sanitized on every read (see shared/sanitize/secrets.ts). */
const sanitizedText = z.pipe(
  z.nullable(z.string()),
  z.transform((value) => (value === null ? null : sanitizeMessage(value))),
);

/**
 * How a field reaches the JSON when PostgreSQL renders a record (the
 * inventory lists, shared/inventory/list.ts): as stored, except timestamps,
 * which SQL formats as toISOString does, and sanitized text, which Node
 * sanitizes after. The output matches the schema's.
 */
export type FieldRendering = 'stored' | 'timestamp' | 'sanitized';

export function fieldRendering(field: z.core.$ZodType): FieldRendering {
  if (field === time || field === requiredTime) return 'timestamp';
  if (field === sanitizedText) return 'sanitized';
  return 'stored';
}

/** A record's fields that Node sanitizes after PostgreSQL renders it. */
export function sanitizedFields(record: z.ZodMiniObject): string[] {
  return Object.entries(record.shape)
    .filter(([, field]) => fieldRendering(field) === 'sanitized')
    .map(([key]) => key);
}

/** Columns every namespaced kind shares, in table order. */
const namespaced = {
  id,
  cluster_id: id,
  namespace_id: optionalId,
  namespace: z.string(),
  name: z.string(),
  uid: text,
  labels: jsonObject,
};
const timestamps = { created_at: time, updated_at: requiredTime };

export const nodeRecord = z.object({
  id,
  cluster_id: id,
  /** The host this node is linked to (by hostname or IP), if any. */
  host_id: optionalId,
  name: z.string(),
  uid: text,
  roles: texts,
  labels: jsonObject,
  taints: jsonArray,
  status: text,
  conditions: jsonArray,
  unschedulable: flag,
  kubelet_version: text,
  container_runtime: text,
  os_image: text,
  kernel_version: text,
  capacity_cpu_millicores: count,
  capacity_memory_bytes: count,
  capacity_pods: count,
  allocatable_cpu_millicores: count,
  allocatable_memory_bytes: count,
  allocatable_pods: count,
  /** metrics-server usage; null when the node reports none (a stored 0 too). */
  usage_cpu_millicores: count,
  usage_memory_bytes: count,
  pod_count: count,
  addresses: jsonArray,
  provider_id: text,
  instance_type: text,
  zone: text,
  ...timestamps,
});
export type NodeRecord = z.output<typeof nodeRecord>;

export const namespaceRecord = z.object({
  id,
  cluster_id: id,
  name: z.string(),
  uid: text,
  status: text,
  labels: jsonObject,
  workload_count: z.number(),
  pod_count: z.number(),
  service_count: z.number(),
  ...timestamps,
});
export type NamespaceRecord = z.output<typeof namespaceRecord>;

export const workloadRecord = z.object({
  id,
  cluster_id: id,
  namespace_id: optionalId,
  kind: z.string(),
  name: z.string(),
  uid: text,
  namespace: z.string(),
  replicas_desired: count,
  replicas_ready: count,
  replicas_available: count,
  conditions: jsonArray,
  strategy: text,
  service_account: text,
  containers: jsonArray,
  labels: jsonObject,
  annotations: jsonObject,
  helm_release: text,
  helm_chart: text,
  helm_chart_version: text,
  spec_facts: optionalJsonObject,
  spec_facts_at: time,
  ...timestamps,
});
export type WorkloadRecord = z.output<typeof workloadRecord>;

export const podRecord = z.object({
  id,
  cluster_id: id,
  namespace_id: optionalId,
  node_id: optionalId,
  workload_id: optionalId,
  namespace: z.string(),
  name: z.string(),
  uid: text,
  labels: jsonObject,
  phase: text,
  node_name: text,
  pod_ip: text,
  host_ip: text,
  qos_class: text,
  owner_kind: text,
  owner_name: text,
  workload_kind: text,
  workload_name: text,
  containers: jsonArray,
  restart_count: count,
  ready_containers: count,
  total_containers: count,
  cpu_requests_millicores: count,
  memory_requests_bytes: count,
  cpu_limits_millicores: count,
  memory_limits_bytes: count,
  started_at: time,
  pending_since: time,
  ...timestamps,
});
export type PodRecord = z.output<typeof podRecord>;

export const serviceRecord = z.object({
  ...namespaced,
  type: text,
  cluster_ip: text,
  cluster_ips: texts,
  external_ips: texts,
  load_balancer_ingress: texts,
  ports: jsonArray,
  selector: optionalJsonObject,
  endpoint_count: count,
  annotations: jsonObject,
  ...timestamps,
});
export type ServiceRecord = z.output<typeof serviceRecord>;

export const ingressRecord = z.object({
  ...namespaced,
  ingress_class: text,
  rules: jsonArray,
  /** `{service, port}` (no service for a resource backend), or null. */
  default_backend: optionalJsonObject,
  tls: jsonArray,
  load_balancer: texts,
  annotations: jsonObject,
  ...timestamps,
});
export type IngressRecord = z.output<typeof ingressRecord>;

export const pvcRecord = z.object({
  ...namespaced,
  phase: text,
  storage_class: text,
  capacity_bytes: count,
  requested_bytes: count,
  access_modes: texts,
  volume_name: text,
  volume_mode: text,
  annotations: jsonObject,
  ...timestamps,
});
export type PvcRecord = z.output<typeof pvcRecord>;

export const eventRecord = z.object({
  ...namespaced,
  type: text,
  reason: text,
  message: sanitizedText,
  involved_kind: text,
  involved_name: text,
  involved_namespace: text,
  involved_uid: text,
  count,
  first_seen: time,
  last_seen: time,
  source_component: text,
  reporting_controller: text,
  ...timestamps,
});
export type EventRecord = z.output<typeof eventRecord>;

export const jobRecord = z.object({
  id,
  cluster_id: id,
  namespace_id: optionalId,
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  uid: text,
  labels: jsonObject,
  schedule: text,
  suspend: flag,
  active: count,
  succeeded: count,
  failed: count,
  completions: count,
  parallelism: count,
  start_time: time,
  completion_time: time,
  last_schedule_time: time,
  status: text,
  owner_cronjob: text,
  containers: jsonArray,
  annotations: jsonObject,
  ...timestamps,
});
export type JobRecord = z.output<typeof jobRecord>;

export const hpaRecord = z.object({
  ...namespaced,
  target_kind: text,
  target_name: text,
  target_api_version: text,
  min_replicas: count,
  max_replicas: count,
  current_replicas: count,
  desired_replicas: count,
  metrics: jsonArray,
  conditions: jsonArray,
  ...timestamps,
});
export type HpaRecord = z.output<typeof hpaRecord>;

export const networkPolicyRecord = z.object({
  ...namespaced,
  pod_selector: optionalJsonObject,
  policy_types: texts,
  ingress: jsonArray,
  egress: jsonArray,
  annotations: jsonObject,
  ...timestamps,
});
export type NetworkPolicyRecord = z.output<typeof networkPolicyRecord>;

export const resourceQuotaRecord = z.object({
  ...namespaced,
  hard: jsonObject,
  used: jsonObject,
  scopes: texts,
  ...timestamps,
});
export type ResourceQuotaRecord = z.output<typeof resourceQuotaRecord>;

export const endpointSliceRecord = z.object({
  ...namespaced,
  service_name: text,
  address_type: text,
  endpoints: jsonArray,
  ports: jsonArray,
  ...timestamps,
});
export type EndpointSliceRecord = z.output<typeof endpointSliceRecord>;

/** One row of Node Capacity (spec: "Node Capacity"). */
export const nodeCapacityRecord = z.object({
  id,
  name: z.string(),
  status: text,
  roles: texts,
  unschedulable: flag,
  pod_count: z.number(),
  cpu_allocatable_millicores: count,
  cpu_requested_millicores: z.number(),
  cpu_limits_millicores: z.number(),
  cpu_used_millicores: count,
  mem_allocatable_bytes: count,
  mem_requested_bytes: z.number(),
  mem_limits_bytes: z.number(),
  mem_used_bytes: count,
  pods_allocatable: count,
});
export type NodeCapacityRecord = z.output<typeof nodeCapacityRecord>;

/** One row of Namespace Usage (spec: "Namespace Usage"). */
export const namespaceUsageRecord = z.object({
  name: z.string(),
  workload_count: z.number(),
  pods_total: z.number(),
  pods_running: z.number(),
  restarts: z.number(),
  cpu_requested_millicores: z.number(),
  cpu_limits_millicores: z.number(),
  mem_requested_bytes: z.number(),
  mem_limits_bytes: z.number(),
});
export type NamespaceUsageRecord = z.output<typeof namespaceUsageRecord>;
