/**
 * The 13 resource kinds as the sync writes them: for each, its table, its
 * natural key, and how a wire row becomes a table row. The sync is generic
 * over this table; nothing else lists the kinds' columns.
 *
 * A mapped row holds only what the agent sent (plus values derived from it),
 * never ids. The row's content_hash is a digest of the wire row's bytes as
 * sent (shared/sync/digests.ts), so a row is validated and mapped only when it
 * changed: a change to a mapping (or to the digest) bumps ROW_SHAPE_VERSION
 * below.
 *
 * A kind's columns are written once, as the keys of its `toRow`: the column
 * list is read from the row an empty wire row maps to, and the unit test
 * (test/unit/sync/kinds.test.ts) proves every generated row maps to exactly
 * those keys.
 */
import { isIPv4 } from 'node:net';
import { type Inventory, KIND_KEYS, type KindKey } from '../wire/inventory.ts';

/**
 * Bumped whenever a kind's mapping to its table or the digest changes, so
 * that every row is rewritten once instead of being taken as unchanged.
 */
export const ROW_SHAPE_VERSION = '6';

type RowOf<K extends KindKey> = NonNullable<Inventory[K]>[number];
export type DbRow = Record<string, unknown>;

/** The spec's processing order: parents before the kinds that link to them. */
export const KIND_ORDER = KIND_KEYS;
export type { KindKey };

/** The spec's prune order: children before parents. */
export const PRUNE_ORDER: readonly KindKey[] = [...KIND_ORDER].reverse();

/**
 * Foreign keys resolved in SQL at write time, from names in the row:
 * `namespace_id` from `namespace`, `node_id` from `node_name`, `workload_id`
 * from `workload_kind`/`namespace`/`workload_name`.
 */
export type Link = 'namespace' | 'node' | 'workload';

export interface KindDefinition<K extends KindKey = KindKey> {
  key: K;
  table: string;
  /** Natural key columns after cluster_id; the ON CONFLICT target. */
  keyColumns: readonly string[];
  /** Columns the row sets (besides cluster_id, links and content_hash). */
  columns: readonly string[];
  links: readonly Link[];
  /** Columns written when the row is created and never by the update. */
  insertOnly?: readonly string[];
  /** Digests the sync keeps beside content_hash, written like it. */
  digests?: readonly string[];
  /**
   * Members the row carries and its table does not store (`toRow` does not
   * read them): read only from the rows as sent, by the series write. The
   * row's digests leave them out (shared/sync/digests.ts), so a row that
   * changed only there is neither written nor validated whole; each such
   * member is validated on its own instead. Not for workloads, whose row
   * digest cuts out their spec facts instead.
   */
  unstored?: readonly string[];
  /**
   * Its rows change between two snapshots of the same bytes (an event ages
   * out of the 24 h list as the snapshot time moves on, and the retention
   * sweep deletes events between syncs), so it keeps no kind digest.
   */
  agesOut?: boolean;
  /** The table row: exactly `columns`, in that order. */
  toRow(row: RowOf<K>): DbRow;
}

interface KindSpec<K extends KindKey, R extends DbRow> {
  table: string;
  /** Checked against the row's keys: a key is always a column. */
  keyColumns: readonly NoInfer<keyof R & string>[];
  links: readonly Link[];
  insertOnly?: readonly string[];
  digests?: readonly string[];
  unstored?: readonly string[];
  agesOut?: boolean;
  /**
   * The row as an object literal (fast properties: V8 made a row built key
   * by key, or `{ ...meta, twenty more }`, a slow dictionary object, which
   * cost a large cluster's pods ~40x more to map and stringify). Its keys,
   * in order, are the kind's columns: it must set every key for every row.
   */
  toRow(row: RowOf<K>): R;
}

/** One kind, its columns read from the keys its `toRow` sets. */
function defineKind<K extends KindKey, R extends DbRow>(
  key: K,
  spec: KindSpec<K, R>,
): KindDefinition<K> {
  const columns = Object.keys(spec.toRow({} as RowOf<K>));
  return { key, ...spec, columns };
}

const n = <T>(v: T | null | undefined): T | null => v ?? null;

/**
 * A namespaced kind's row: the metadata every such kind carries, then its
 * own fields, in this key order (the row's JSON is its digest). Assigned
 * rather than spread: V8 turns `{ ...meta, twenty more }` into a slow
 * dictionary object, which made mapping and stringifying a large cluster's
 * pods cost ~40x more.
 */
function withMeta<F extends DbRow>(
  row: {
    namespace: string;
    name: string;
    uid?: string | null;
    labels?: Record<string, string> | null;
    created_at?: string | null;
  },
  fields: F,
): Meta & F {
  const meta = {
    namespace: row.namespace,
    name: row.name,
    uid: n(row.uid),
    labels: row.labels ?? {},
    created_at: n(row.created_at),
  };
  return Object.assign(meta, fields);
}

/** A type, not an interface: it must be assignable to DbRow. */
type Meta = {
  namespace: string;
  name: string;
  uid: string | null;
  labels: Record<string, string>;
  created_at: string | null;
};
const NS_KEY = ['namespace', 'name'] as const;

interface Resources {
  cpu_millicores?: number | null;
  memory_bytes?: number | null;
}
interface PodContainer {
  init?: boolean | null;
  requests?: Resources | null;
  limits?: Resources | null;
}

/**
 * A pod's effective request or limit, as the scheduler counts it: the larger
 * of the sum over its app containers and the largest init container.
 * Null when no container sets it.
 */
export function effectiveResource(
  containers: readonly PodContainer[],
  side: 'requests' | 'limits',
  field: keyof Resources,
): number | null {
  let sum = 0;
  let initMax = 0;
  let seen = false;
  for (const c of containers) {
    const value = c[side]?.[field];
    if (value === null || value === undefined) continue;
    seen = true;
    if (c.init) initMax = Math.max(initMax, value);
    else sum += value;
  }
  return seen ? Math.max(sum, initMax) : null;
}

/** An IPv4 address as a number (for sorting); null for anything else. */
export function ipv4Number(ip: string | null | undefined): number | null {
  if (!ip || !isIPv4(ip)) return null;
  return ip.split('.').reduce((acc, octet) => acc * 256 + Number(octet), 0);
}

const nodes = defineKind('nodes', {
  table: 'k8s_nodes',
  keyColumns: ['name'],
  links: [],
  toRow: (r) => ({
    name: r.name,
    uid: n(r.uid),
    roles: r.roles ?? [],
    labels: r.labels ?? {},
    taints: r.taints ?? [],
    status: n(r.status),
    conditions: r.conditions ?? [],
    unschedulable: n(r.unschedulable),
    kubelet_version: n(r.kubelet_version),
    container_runtime: n(r.container_runtime),
    os_image: n(r.os_image),
    kernel_version: n(r.kernel_version),
    capacity_cpu_millicores: n(r.capacity?.cpu_millicores),
    capacity_memory_bytes: n(r.capacity?.memory_bytes),
    capacity_pods: n(r.capacity?.pods),
    allocatable_cpu_millicores: n(r.allocatable?.cpu_millicores),
    allocatable_memory_bytes: n(r.allocatable?.memory_bytes),
    allocatable_pods: n(r.allocatable?.pods),
    usage_cpu_millicores: n(r.usage?.cpu_millicores),
    usage_memory_bytes: n(r.usage?.memory_bytes),
    pod_count: n(r.pod_count),
    addresses: r.addresses ?? [],
    provider_id: n(r.provider_id),
    instance_type: n(r.instance_type),
    zone: n(r.zone),
    created_at: n(r.created_at),
  }),
});

const namespaces = defineKind('namespaces', {
  table: 'k8s_namespaces',
  keyColumns: ['name'],
  links: [],
  // The per-namespace counts are computed from the stored rows after the
  // sync, so they always agree with what the API lists.
  toRow: (r) => ({
    name: r.name,
    uid: n(r.uid),
    status: n(r.status),
    labels: r.labels ?? {},
    created_at: n(r.created_at),
  }),
});

const workloads = defineKind('workloads', {
  table: 'k8s_workloads',
  keyColumns: ['kind', 'namespace', 'name'],
  links: ['namespace'],
  // spec_facts follow their own rules (workload change records): the facts
  // step writes them, except a new workload's first facts, which its insert
  // carries as the baseline.
  insertOnly: ['spec_facts', 'spec_facts_hash', 'spec_facts_at'],
  // The digest of the facts as sent: with content_hash, what tells the
  // workload unchanged (shared/sync/digests.ts).
  digests: ['spec_facts_wire_hash'],
  toRow: (r) =>
    withMeta(r, {
      kind: r.kind,
      replicas_desired: n(r.replicas_desired),
      replicas_ready: n(r.replicas_ready),
      replicas_available: n(r.replicas_available),
      conditions: r.conditions ?? [],
      strategy: n(r.strategy),
      service_account: n(r.service_account),
      containers: r.containers ?? [],
      annotations: r.annotations ?? {},
      helm_release: n(r.helm_release),
      helm_chart: n(r.helm_chart),
      helm_chart_version: n(r.helm_chart_version),
    }),
});

const pods = defineKind('pods', {
  table: 'k8s_pods',
  keyColumns: NS_KEY,
  links: ['namespace', 'node', 'workload'],
  // Summed from metrics-server, it moves at nearly every sync: it goes to
  // the metrics series only (shared/metrics/series.ts).
  unstored: ['usage'],
  toRow: (r) => {
    const containers = r.containers ?? [];
    return withMeta(r, {
      phase: n(r.phase),
      node_name: n(r.node_name),
      pod_ip: n(r.pod_ip),
      host_ip: n(r.host_ip),
      qos_class: n(r.qos_class),
      owner_kind: n(r.owner_kind),
      owner_name: n(r.owner_name),
      workload_kind: n(r.workload_kind),
      workload_name: n(r.workload_name),
      containers,
      restart_count: n(r.restart_count),
      ready_containers: n(r.ready_containers),
      total_containers: n(r.total_containers),
      cpu_requests_millicores: effectiveResource(
        containers,
        'requests',
        'cpu_millicores',
      ),
      memory_requests_bytes: effectiveResource(
        containers,
        'requests',
        'memory_bytes',
      ),
      cpu_limits_millicores: effectiveResource(
        containers,
        'limits',
        'cpu_millicores',
      ),
      memory_limits_bytes: effectiveResource(
        containers,
        'limits',
        'memory_bytes',
      ),
      started_at: n(r.started_at),
      pending_since: n(r.pending_since),
    });
  },
});

const services = defineKind('services', {
  table: 'k8s_services',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      type: n(r.type),
      cluster_ip: n(r.cluster_ip),
      cluster_ip_v4: ipv4Number(r.cluster_ip),
      cluster_ips: r.cluster_ips ?? [],
      external_ips: r.external_ips ?? [],
      load_balancer_ingress: r.load_balancer_ingress ?? [],
      ports: r.ports ?? [],
      selector: n(r.selector),
      endpoint_count: n(r.endpoint_count),
      annotations: r.annotations ?? {},
    }),
});

const ingresses = defineKind('ingresses', {
  table: 'k8s_ingresses',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      ingress_class: n(r.ingress_class),
      rules: r.rules ?? [],
      default_backend: n(r.default_backend),
      tls: r.tls ?? [],
      load_balancer: r.load_balancer ?? [],
      annotations: r.annotations ?? {},
    }),
});

const pvcs = defineKind('pvcs', {
  table: 'k8s_pvcs',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      phase: n(r.phase),
      storage_class: n(r.storage_class),
      capacity_bytes: n(r.capacity_bytes),
      requested_bytes: n(r.requested_bytes),
      access_modes: r.access_modes ?? [],
      volume_name: n(r.volume_name),
      volume_mode: n(r.volume_mode),
      annotations: r.annotations ?? {},
    }),
});

const events = defineKind('events', {
  table: 'k8s_events',
  keyColumns: NS_KEY,
  links: ['namespace'],
  agesOut: true,
  toRow: (r) =>
    withMeta(r, {
      type: n(r.type),
      reason: n(r.reason),
      message: n(r.message),
      involved_kind: n(r.involved_object?.kind),
      involved_name: n(r.involved_object?.name),
      involved_namespace: n(r.involved_object?.namespace),
      involved_uid: n(r.involved_object?.uid),
      count: n(r.count),
      first_seen: n(r.first_seen),
      last_seen: n(r.last_seen),
      source_component: n(r.source_component),
      reporting_controller: n(r.reporting_controller),
    }),
});

const jobs = defineKind('jobs', {
  table: 'k8s_jobs',
  keyColumns: ['kind', 'namespace', 'name'],
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      kind: r.kind,
      schedule: n(r.schedule),
      suspend: n(r.suspend),
      active: n(r.active),
      succeeded: n(r.succeeded),
      failed: n(r.failed),
      completions: n(r.completions),
      parallelism: n(r.parallelism),
      start_time: n(r.start_time),
      completion_time: n(r.completion_time),
      last_schedule_time: n(r.last_schedule_time),
      status: n(r.status),
      owner_cronjob: n(r.owner_cronjob),
      containers: r.containers ?? [],
      annotations: r.annotations ?? {},
    }),
});

const hpas = defineKind('hpas', {
  table: 'k8s_hpas',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      target_kind: n(r.target?.kind),
      target_name: n(r.target?.name),
      target_api_version: n(r.target?.api_version),
      min_replicas: n(r.min_replicas),
      max_replicas: n(r.max_replicas),
      current_replicas: n(r.current_replicas),
      desired_replicas: n(r.desired_replicas),
      metrics: r.metrics ?? [],
      conditions: r.conditions ?? [],
    }),
});

const networkPolicies = defineKind('network_policies', {
  table: 'k8s_network_policies',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      pod_selector: n(r.pod_selector),
      policy_types: r.policy_types ?? [],
      ingress: r.ingress ?? [],
      egress: r.egress ?? [],
      annotations: r.annotations ?? {},
    }),
});

const resourceQuotas = defineKind('resource_quotas', {
  table: 'k8s_resource_quotas',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      hard: r.hard ?? {},
      used: r.used ?? {},
      scopes: r.scopes ?? [],
    }),
});

const endpointSlices = defineKind('endpoint_slices', {
  table: 'k8s_endpoint_slices',
  keyColumns: NS_KEY,
  links: ['namespace'],
  toRow: (r) =>
    withMeta(r, {
      service_name: n(r.service_name),
      address_type: n(r.address_type),
      endpoints: r.endpoints ?? [],
      ports: r.ports ?? [],
    }),
});

export const KINDS: { readonly [K in KindKey]: KindDefinition<K> } = {
  nodes,
  namespaces,
  workloads,
  pods,
  services,
  ingresses,
  pvcs,
  events,
  jobs,
  hpas,
  network_policies: networkPolicies,
  resource_quotas: resourceQuotas,
  endpoint_slices: endpointSlices,
};

/** A row's natural key as one string, in the same spelling SQL builds it. */
export function naturalKey(def: KindDefinition, row: DbRow): string {
  return keyOf(def.keyColumns.map((c) => row[c]));
}

/** A key from its columns' values, in keyColumns' order. */
export function keyOf(values: readonly unknown[]): string {
  return values.map(String).join('\u0001');
}
