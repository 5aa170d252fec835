/**
 * The cluster's resource lists: the ten searchable, sortable lists of the
 * spec's "Search and sort on the resource lists" and the 24-hour events
 * list, each one row of {@link LISTS} driving the shared list engine.
 *
 * Every function takes a cluster the handler already checked (known, inside
 * the caller's environments, assets:read held): parameters are validated
 * here, after those checks, so an unauthorized caller never sees a 400.
 *
 * Parameters (`params` is `parseQueryString(event.rawQueryString)`):
 * - q: see parseSearch; sort: one key of the list's allow-list, `-` for
 *   descending, nulls last both ways, ties by namespace, name, id; a
 *   repeated q or sort, or a bad value, is 400 invalid_param.
 * - filters: namespace (a DNS-1123 label) on every list; workloads and jobs
 *   also kind; pods also phase; events only type. A bad or repeated value
 *   is 400 bad_request; an empty value is no filter. q narrows them.
 * - labels (workloads, pods, jobs: the lists whose records carry labels):
 *   `key=value[,key2=value2]`, `key` alone for "has the label"; every term
 *   must hold. Keys and values follow Kubernetes' label syntax, a key at
 *   most once; anything else is 400 bad_request naming the term.
 * - page (default 1, at most 1,000,000) and per_page (default 50, larger
 *   values clamped to 500); a non-positive or non-integer value is 400
 *   bad_request.
 * - Parameters a list does not know are ignored by these functions; the
 *   route's reader (readRouteQuery) refuses them with 400 invalid_param.
 *
 * Response: `{ data: Record[], meta: { total, page, per_page } }`, total
 * counted before paging, per_page as applied (after clamping).
 */
import type { Queryable } from '../db/pool.ts';
import type { QueryParams } from '../http/query.ts';
import {
  kindFilter,
  type ListDefinition,
  type ListPage,
  namespaceFilter,
  oneOfFilter,
  runList,
  TIE_BREAK,
} from './list.ts';
import {
  type EndpointSliceRecord,
  type EventRecord,
  endpointSliceRecord,
  eventRecord,
  type HpaRecord,
  hpaRecord,
  type IngressRecord,
  ingressRecord,
  type JobRecord,
  jobRecord,
  type NetworkPolicyRecord,
  networkPolicyRecord,
  type PodRecord,
  type PvcRecord,
  podRecord,
  pvcRecord,
  type ResourceQuotaRecord,
  resourceQuotaRecord,
  type ServiceRecord,
  serviceRecord,
  type WorkloadRecord,
  workloadRecord,
} from './records.ts';

export const POD_PHASES = [
  'Pending',
  'Running',
  'Succeeded',
  'Failed',
  'Unknown',
] as const;
export const EVENT_TYPES = ['Normal', 'Warning'] as const;

const byNamespaceFilter = { column: 'namespace', field: namespaceFilter };
const byKindFilter = { column: 'kind', field: kindFilter };

const byName = { exprs: ['name'] };
const byNamespace = { exprs: ['namespace'] };
/** Kubernetes creation time; age ascending is youngest first. */
const byAge = { exprs: ['created_at'], inverted: true };
const usualOrder = TIE_BREAK;

/**
 * cluster_ip: IPv4 addresses numerically (cluster_ip_v4, set by the sync),
 * then every other value (None, IPv6, anything else) as text, then rows
 * with none. Descending reverses both groups and keeps nulls last.
 */
const byClusterIp = {
  exprs: [
    'case when cluster_ip_v4 is not null then 0 when cluster_ip is not null then 1 end',
    'cluster_ip_v4',
    'cluster_ip',
  ],
};

/** Every list's definition, by its route segment. */
export const LISTS = {
  workloads: {
    table: 'k8s_workloads',
    record: workloadRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      kind: { exprs: ['kind'] },
      replicas: { exprs: ['replicas_desired'] },
      helm: { exprs: ['helm_release'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter, kind: byKindFilter },
    labels: true,
    defaultOrder: ['namespace', 'kind', 'name', 'id'],
  },
  pods: {
    table: 'k8s_pods',
    record: podRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      phase: { exprs: ['phase'] },
      ready: { exprs: ['ready_containers'] },
      restarts: { exprs: ['restart_count'] },
      cpu: { exprs: ['cpu_requests_millicores'] },
      memory: { exprs: ['memory_requests_bytes'] },
      node: { exprs: ['node_name'] },
      age: { exprs: ['coalesce(started_at, created_at)'], inverted: true },
    },
    filters: {
      namespace: byNamespaceFilter,
      phase: { column: 'phase', field: oneOfFilter(POD_PHASES) },
    },
    labels: true,
    defaultOrder: usualOrder,
    scopes: { node: 'node_id', workload: 'workload_id' },
    searchKey: 'search_key',
    // idx_k8s_pods_list (migrations/0006).
    pageKeyColumns: [
      'namespace',
      'name',
      'id',
      'phase',
      'ready_containers',
      'restart_count',
      'cpu_requests_millicores',
      'memory_requests_bytes',
      'node_name',
      'started_at',
      'created_at',
      'node_id',
      'workload_id',
      'search_key',
    ],
  },
  services: {
    table: 'k8s_services',
    record: serviceRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      type: { exprs: ['type'] },
      cluster_ip: byClusterIp,
      endpoints: { exprs: ['endpoint_count'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  ingresses: {
    table: 'k8s_ingresses',
    record: ingressRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      class: { exprs: ['ingress_class'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  pvcs: {
    table: 'k8s_pvcs',
    record: pvcRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      phase: { exprs: ['phase'] },
      storage_class: { exprs: ['storage_class'] },
      capacity: { exprs: ['capacity_bytes'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  jobs: {
    table: 'k8s_jobs',
    record: jobRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      kind: { exprs: ['kind'] },
      schedule: { exprs: ['schedule'] },
      status: { exprs: ['status'] },
      completions: { exprs: ['succeeded'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter, kind: byKindFilter },
    labels: true,
    defaultOrder: usualOrder,
  },
  hpas: {
    table: 'k8s_hpas',
    record: hpaRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      target: { exprs: ['target_name'] },
      min: { exprs: ['min_replicas'] },
      max: { exprs: ['max_replicas'] },
      current: { exprs: ['current_replicas'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  'network-policies': {
    table: 'k8s_network_policies',
    record: networkPolicyRecord,
    search: true,
    sortKeys: { name: byName, namespace: byNamespace, age: byAge },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  'resource-quotas': {
    table: 'k8s_resource_quotas',
    record: resourceQuotaRecord,
    search: true,
    sortKeys: { name: byName, namespace: byNamespace, age: byAge },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  'endpoint-slices': {
    table: 'k8s_endpoint_slices',
    record: endpointSliceRecord,
    search: true,
    sortKeys: {
      name: byName,
      namespace: byNamespace,
      address_type: { exprs: ['address_type'] },
      service: { exprs: ['service_name'] },
      age: byAge,
    },
    filters: { namespace: byNamespaceFilter },
    defaultOrder: usualOrder,
  },
  /**
   * PostgreSQL keeps 24 hours of events (the 14-day copy is the events
   * timeline). No q or sort: newest first, by seen_at (migrations/0007:
   * last seen, else first seen, else created, else written), so an event an
   * older agent reported with no last-seen time is listed too.
   */
  events: {
    table: 'k8s_events',
    record: eventRecord,
    search: false,
    sortKeys: {},
    filters: { type: { column: 'type', field: oneOfFilter(EVENT_TYPES) } },
    where: "seen_at >= now() - interval '24 hours'",
    defaultOrder: ['seen_at desc', 'id'],
  },
} as const satisfies Record<string, ListDefinition>;

export type ListName = keyof typeof LISTS;

/** The sort keys each list allows, by list (for documentation and tests). */
export function sortKeysOf(list: ListName): string[] {
  return Object.keys(LISTS[list].sortKeys);
}

/**
 * GET /clusters/:id/workloads — filters namespace, kind; q; sort name,
 * namespace, kind, replicas, helm, age; usual order namespace, kind, name.
 */
export function listWorkloads(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<WorkloadRecord>> {
  return runList(db, LISTS.workloads, clusterId, params);
}

/**
 * GET /clusters/:id/pods — filters namespace, phase; q; sort name,
 * namespace, phase, ready, restarts, cpu, memory, node, age.
 */
export function listPods(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<PodRecord>> {
  return runList(db, LISTS.pods, clusterId, params);
}

/** GET /clusters/:id/services — filter namespace; q; sort incl. cluster_ip. */
export function listServices(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<ServiceRecord>> {
  return runList(db, LISTS.services, clusterId, params);
}

/** GET /clusters/:id/ingresses — filter namespace; q; sort. */
export function listIngresses(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<IngressRecord>> {
  return runList(db, LISTS.ingresses, clusterId, params);
}

/** GET /clusters/:id/pvcs — filter namespace; q; sort. */
export function listPvcs(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<PvcRecord>> {
  return runList(db, LISTS.pvcs, clusterId, params);
}

/** GET /clusters/:id/jobs — filters namespace, kind (Job, CronJob); q; sort. */
export function listJobs(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<JobRecord>> {
  return runList(db, LISTS.jobs, clusterId, params);
}

/** GET /clusters/:id/hpas — filter namespace; q; sort. */
export function listHpas(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<HpaRecord>> {
  return runList(db, LISTS.hpas, clusterId, params);
}

/** GET /clusters/:id/network-policies — filter namespace; q; sort. */
export function listNetworkPolicies(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<NetworkPolicyRecord>> {
  return runList(db, LISTS['network-policies'], clusterId, params);
}

/** GET /clusters/:id/resource-quotas — filter namespace; q; sort. */
export function listResourceQuotas(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<ResourceQuotaRecord>> {
  return runList(db, LISTS['resource-quotas'], clusterId, params);
}

/** GET /clusters/:id/endpoint-slices — filter namespace; q; sort. */
export function listEndpointSlices(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<EndpointSliceRecord>> {
  return runList(db, LISTS['endpoint-slices'], clusterId, params);
}

/**
 * GET /clusters/:id/events — the last 24 hours (by seen_at), newest
 * first; filter type (Normal, Warning); page, per_page. Each message is
 * secret-sanitized (the record schema applies sanitizeMessage).
 */
export function listEvents(
  db: Queryable,
  clusterId: string,
  params: QueryParams,
): Promise<ListPage<EventRecord>> {
  return runList(db, LISTS.events, clusterId, params);
}
