/**
 * The cluster inventory message, version 1 (wire-contract.md): the only input
 * the sync trusts. `parseInventory` accepts every message the contract allows
 * and refuses every other one with a reason that names the field and the rule.
 *
 * Normalization, chosen so the sync never has to tell "absent" from "null":
 * - An optional scalar (string, time, count, boolean) that is absent or null
 *   comes out as `null`. A count is never invented: absent stays `null`, not 0.
 * - A list or map inside a row (labels, annotations, conditions, containers,
 *   ports...) that is absent or null comes out as `[]` or `{}`. Agents written
 *   in Go send `null` for an empty slice or map; both mean "none".
 * - A `{cpu_millicores, memory_bytes}` pair (container requests and limits)
 *   and a node's capacity and allocatable come out as an object whose fields
 *   may be null, never as null, so their columns read without a null check.
 *   A node's `usage` stays `null` when absent: no metrics is not zero usage.
 * - `uid` is optional on every row (`null` when not sent). Rows are keyed by
 *   kind, namespace and name; an agent that omits uids still syncs.
 * - `spec_facts` absent or null is `null`: unknown, never an empty set.
 * - Each of the 13 kind arrays keeps its absence: a missing array (or `null`)
 *   is `undefined` in the result, which means "not collected this sync", so
 *   the sync does not prune that kind. It is never defaulted to `[]`.
 * - Unknown fields are dropped, at every level.
 *
 * Kubernetes-derived states (phases, condition statuses, event types, node
 * status) are free strings with a length cap, not closed lists: Kubernetes
 * and CRDs add values, and one unfamiliar phase must not refuse a whole
 * cluster's snapshot. Only the agent's own `cluster.status` is a closed list.
 * Network policy rules and selectors are kept as sent (JSON objects, as in the
 * Kubernetes API): they are stored and shown, never interpreted here.
 *
 * Length caps keep a hostile payload from storing huge values in one field:
 * they follow Kubernetes' own limits where it has them (label values 63,
 * names 253, an object's annotations 256 KiB), so no real object is refused.
 */

import * as z from 'zod';
import { RejectedInventoryError } from '../errors.ts';
import { CLUSTER_STATUSES, UUID_PATTERN } from '../patterns.ts';
import { jsonBoundViolation } from './bounded-json.ts';
import { errorMap, formatIssues, formatPath } from './issues.ts';
import { repoUrlHasUserinfo } from './repo-url.ts';
import { specFactsSchema } from './spec-facts.ts';
import { mayHoldUnstorableText, unstorableText } from './storable-text.ts';

export const SCHEMA_VERSION = 1;

/**
 * The version of the rules this schema applies. A row whose bytes were
 * accepted before is not validated again (the sync's row digests tell), so
 * every stored digest folds this version in: bump it with any change to
 * what the schema accepts or how it reshapes a row, and every row is
 * validated (and written) once more. The unit test fails on a change to the
 * schema's JSON Schema form until it is bumped; a change inside a
 * refinement (bounded-json.ts, storable-text.ts, repo-url.ts, spec-facts.ts)
 * must bump it by hand.
 */
export const WIRE_RULES_VERSION = '2';

/** The 13 kind arrays, in the spec's processing (upsert) order. */
export const KIND_KEYS = [
  'nodes',
  'namespaces',
  'workloads',
  'pods',
  'services',
  'ingresses',
  'pvcs',
  'events',
  'jobs',
  'hpas',
  'network_policies',
  'resource_quotas',
  'endpoint_slices',
] as const;
export type KindKey = (typeof KIND_KEYS)[number];

export const LIMITS = {
  /** Object names (DNS-1123 subdomain) and references to them. */
  name: 253,
  /** Namespace names (DNS-1123 label). */
  namespace: 63,
  /** Kinds, phases, statuses, types, protocols, reasons. */
  short: 128,
  /** Images, versions, hostnames, URLs, addresses, selectors' strings. */
  text: 2048,
  /** Event messages and condition messages. */
  message: 32 * 1024,
  /** Label and annotation keys: a 253-character prefix, '/', a 63 name. */
  labelKey: 317,
  labelValue: 63,
  /** Kubernetes caps all annotations of an object at 256 KiB together. */
  annotationValue: 256 * 1024,
  /** Kubernetes quantity strings ("500m", "1Gi"). */
  quantity: 64,
} as const;

// ---------------------------------------------------------------- helpers

/**
 * `z.number().int()` reports a string as "expected number"; the reason should
 * say "integer". A schema-level message does that without any refinement.
 */
const integerType = {
  error: (iss: z.core.$ZodRawIssue) => {
    if (iss.code !== 'invalid_type') return undefined;
    return iss.input === undefined ? 'required' : 'expected an integer';
  },
};
const int = z.number(integerType).int();
/**
 * Counts, replicas, ports and CPU millicores: 32-bit in Kubernetes' own API
 * and in their columns, so a larger value is refused here, naming its field,
 * rather than by PostgreSQL. Byte amounts are `bytes`.
 */
const count = int.min(0).max(2_147_483_647);
/** Byte amounts (memory, storage): past 2^31 (zod's int stops at 2^53). */
const bytes = int.min(0);
const optBytes = bytes.nullable().default(null);

const text = (max: number) => z.string().max(max);
const requiredName = (max: number = LIMITS.name) => z.string().min(1).max(max);

const optText = (max: number) => z.string().max(max).nullable().default(null);
const optCount = count.nullable().default(null);
const optBool = z.boolean().nullable().default(null);

/** RFC 3339 with an offset (`Z` or `±hh:mm`); fractional seconds allowed. */
const time = z.iso.datetime({ offset: true });
const optTime = time.nullable().default(null);

/**
 * Null handling without a transform per field. A zod transform is a pipe
 * that allocates at every value it passes; one per list field about doubled
 * the parse time of a large inventory. Instead, a field built by `orDefault`
 * gets its default when absent (zod's `.default`) and also accepts `null`;
 * the enclosing `obj` replaces that null with the default in one pass over
 * its own output object, which zod has just allocated (the input is never
 * touched). The static type is the defaulted one, which is what `obj`
 * guarantees at run time.
 */
const nullDefaults = new WeakMap<object, () => unknown>();

/** Accepts absent or null; outputs the value or its default, never null. */
type Defaulted<T extends z.ZodType> = z.ZodType<
  z.output<T>,
  z.input<T> | null | undefined,
  z.core.$ZodTypeInternals<z.output<T>, z.input<T> | null | undefined> & {
    optin: 'defaulted';
  }
>;

/** Accepts absent or null; outputs the value or leaves the key undefined. */
type AbsentOrNull<T extends z.ZodType> = z.ZodType<
  z.output<T> | undefined,
  z.input<T> | null | undefined,
  z.core.$ZodTypeInternals<
    z.output<T> | undefined,
    z.input<T> | null | undefined
  > & { optin: 'optional'; optout: 'optional' }
>;

function orDefault<T extends z.ZodType>(
  schema: T,
  make: () => z.output<T>,
): Defaulted<T> {
  const tolerant = schema.default(make as never).nullable();
  nullDefaults.set(tolerant, make);
  return tolerant as unknown as Defaulted<T>;
}

/** An optional field whose `null` means the same as its absence. */
function nullAsAbsent<T extends z.ZodType>(schema: T): AbsentOrNull<T> {
  const tolerant = schema.optional().nullable();
  nullDefaults.set(tolerant, () => undefined);
  return tolerant as unknown as AbsentOrNull<T>;
}

/** `z.object` (unknown keys stripped) that resolves its `orDefault` nulls. */
function obj<S extends z.core.$ZodLooseShape>(shape: S) {
  const fixes: [string, () => unknown][] = [];
  for (const [key, field] of Object.entries(shape)) {
    const make = nullDefaults.get(field);
    if (make) fixes.push([key, make]);
  }
  const schema = z.object(shape);
  if (fixes.length === 0) return schema;
  return schema.overwrite((value) => {
    const out = value as Record<string, unknown>;
    for (const [key, make] of fixes) {
      if (out[key] === null) out[key] = make();
    }
    return value;
  });
}

/** A list in a row: absent or null is `[]`. */
const list = <T extends z.ZodType>(item: T) =>
  orDefault(z.array(item), () => []);

/** A string map in a row: absent or null is `{}`. */
const stringMap = (keyMax: number, valueMax: number) =>
  orDefault(
    z.record(z.string().max(keyMax), z.string().max(valueMax)),
    () => ({}),
  );

const labels = stringMap(LIMITS.labelKey, LIMITS.labelValue);
const annotations = stringMap(LIMITS.labelKey, LIMITS.annotationValue);

/**
 * Opaque JSON kept as sent (network policy selectors and rules), bounded in
 * depth and size (bounded-json.ts) and refused with the path where it breaks.
 */
const jsonObject = z
  .record(z.string().max(LIMITS.labelKey), z.unknown())
  .superRefine((value, ctx) => {
    const violation = jsonBoundViolation(value);
    if (violation !== undefined) {
      ctx.addIssue({
        code: 'custom',
        message: violation.rule,
        path: violation.path,
      });
    }
  });

const intOrString = z.union([int, text(LIMITS.short)], {
  error: (iss) =>
    iss.input === undefined ? 'required' : 'expected an integer or a string',
});

const amounts = obj({
  cpu_millicores: optCount,
  memory_bytes: optBytes,
});
export type Amounts = z.output<typeof amounts>;
const noAmounts = (): Amounts => ({ cpu_millicores: null, memory_bytes: null });
/** Requests or limits: absent or null is `{cpu_millicores: null, ...}`. */
const optAmounts = orDefault(amounts, noAmounts);

const nodeResources = obj({
  cpu_millicores: optCount,
  memory_bytes: optBytes,
  pods: optCount,
});
export type NodeResources = z.output<typeof nodeResources>;
const optNodeResources = orDefault(
  nodeResources,
  (): NodeResources => ({
    cpu_millicores: null,
    memory_bytes: null,
    pods: null,
  }),
);

export const conditionSchema = obj({
  type: requiredName(LIMITS.labelKey),
  status: optText(LIMITS.short),
  reason: optText(LIMITS.text),
  message: optText(LIMITS.message),
  last_transition_time: optTime,
});
const conditions = list(conditionSchema);

/** Fields every row carries; namespaced rows add `namespace`. */
const common = {
  name: requiredName(),
  uid: optText(LIMITS.short),
  labels,
  created_at: optTime,
};
const namespaced = {
  namespace: requiredName(LIMITS.namespace),
  ...common,
};

// ------------------------------------------------------------------ rows

export const nodeRowSchema = obj({
  ...common,
  roles: list(text(LIMITS.name)),
  taints: list(
    obj({
      key: requiredName(LIMITS.labelKey),
      value: optText(LIMITS.labelValue),
      effect: optText(LIMITS.short),
    }),
  ),
  status: optText(LIMITS.short),
  conditions,
  unschedulable: optBool,
  kubelet_version: optText(LIMITS.text),
  container_runtime: optText(LIMITS.text),
  os_image: optText(LIMITS.text),
  kernel_version: optText(LIMITS.text),
  capacity: optNodeResources,
  allocatable: optNodeResources,
  usage: amounts.nullable().default(null),
  addresses: list(
    obj({
      type: text(LIMITS.short),
      address: text(LIMITS.text),
    }),
  ),
  provider_id: optText(LIMITS.text),
  instance_type: optText(LIMITS.short),
  zone: optText(LIMITS.short),
  pod_count: optCount,
});

export const namespaceRowSchema = obj({
  ...common,
  status: optText(LIMITS.short),
  workload_count: optCount,
  pod_count: optCount,
  service_count: optCount,
});

export const workloadContainerSchema = obj({
  name: requiredName(),
  image: optText(LIMITS.text),
  ports: list(
    obj({
      name: optText(LIMITS.short),
      container_port: count.nullable().default(null),
      protocol: optText(LIMITS.short),
    }),
  ),
  requests: optAmounts,
  limits: optAmounts,
});

export const workloadRowSchema = obj({
  ...namespaced,
  /** Deployment, StatefulSet, DaemonSet, Rollout; any other kind accepted. */
  kind: requiredName(LIMITS.short),
  replicas_desired: optCount,
  replicas_ready: optCount,
  replicas_available: optCount,
  conditions,
  strategy: optText(LIMITS.short),
  service_account: optText(LIMITS.name),
  containers: list(workloadContainerSchema),
  annotations,
  helm_release: optText(LIMITS.name),
  helm_chart: optText(LIMITS.name),
  helm_chart_version: optText(LIMITS.short),
  /** Absent or null: unknown (old agent, workloadRef Rollout, size cap). */
  spec_facts: specFactsSchema.nullable().default(null),
});

export const podContainerSchema = obj({
  name: requiredName(),
  image: optText(LIMITS.text),
  init: orDefault(z.boolean(), () => false),
  ready: optBool,
  restart_count: optCount,
  /** running, waiting or terminated. */
  state: optText(LIMITS.short),
  waiting_reason: optText(LIMITS.short),
  last_termination_reason: optText(LIMITS.short),
  requests: optAmounts,
  limits: optAmounts,
});

export const podRowSchema = obj({
  ...namespaced,
  /** v1.1: summed over the pod's containers; null when metrics-server has none. */
  usage: amounts.nullable().default(null),
  phase: optText(LIMITS.short),
  node_name: optText(LIMITS.name),
  pod_ip: optText(LIMITS.short),
  host_ip: optText(LIMITS.short),
  qos_class: optText(LIMITS.short),
  owner_kind: optText(LIMITS.short),
  owner_name: optText(LIMITS.name),
  workload_kind: optText(LIMITS.short),
  workload_name: optText(LIMITS.name),
  containers: list(podContainerSchema),
  restart_count: optCount,
  ready_containers: optCount,
  total_containers: optCount,
  started_at: optTime,
  pending_since: optTime,
});

export const serviceRowSchema = obj({
  ...namespaced,
  type: optText(LIMITS.short),
  cluster_ip: optText(LIMITS.short),
  cluster_ips: list(text(LIMITS.short)),
  external_ips: list(text(LIMITS.text)),
  /** Each an IP or a hostname. */
  load_balancer_ingress: list(text(LIMITS.text)),
  ports: list(
    obj({
      name: optText(LIMITS.short),
      protocol: optText(LIMITS.short),
      port: count.nullable().default(null),
      target_port: intOrString.nullable().default(null),
      node_port: count.nullable().default(null),
    }),
  ),
  selector: labels,
  endpoint_count: optCount,
  annotations,
});

/** An Ingress backend: the service (none for a resource backend), its port. */
const ingressBackend = {
  service: optText(LIMITS.name),
  port: intOrString.nullable().default(null),
};

export const ingressRowSchema = obj({
  ...namespaced,
  ingress_class: optText(LIMITS.name),
  rules: list(
    obj({
      host: optText(LIMITS.name),
      paths: list(
        obj({
          path: optText(LIMITS.text),
          path_type: optText(LIMITS.short),
          ...ingressBackend,
        }),
      ),
    }),
  ),
  /** v1.1: absent (an older agent) or null when the Ingress has none. */
  default_backend: obj(ingressBackend).nullable().default(null),
  tls: list(
    obj({
      hosts: list(text(LIMITS.name)),
      secret_name: optText(LIMITS.name),
    }),
  ),
  /** Each an IP or a hostname. */
  load_balancer: list(text(LIMITS.text)),
  annotations,
});

export const pvcRowSchema = obj({
  ...namespaced,
  phase: optText(LIMITS.short),
  storage_class: optText(LIMITS.name),
  capacity_bytes: optBytes,
  requested_bytes: optBytes,
  access_modes: list(text(LIMITS.short)),
  volume_name: optText(LIMITS.name),
  volume_mode: optText(LIMITS.short),
  annotations,
});

export const eventRowSchema = obj({
  ...namespaced,
  type: optText(LIMITS.short),
  reason: optText(LIMITS.text),
  message: optText(LIMITS.message),
  involved_object: z
    .object({
      kind: optText(LIMITS.short),
      name: optText(LIMITS.name),
      namespace: optText(LIMITS.namespace),
      uid: optText(LIMITS.short),
    })
    .nullable()
    .default(null),
  count: optCount,
  first_seen: optTime,
  /** The agent has already applied its fallback chain. */
  last_seen: optTime,
  source_component: optText(LIMITS.name),
  reporting_controller: optText(LIMITS.name),
});

export const jobRowSchema = obj({
  ...namespaced,
  /** Job or CronJob. */
  kind: requiredName(LIMITS.short),
  schedule: optText(LIMITS.text),
  suspend: optBool,
  active: optCount,
  succeeded: optCount,
  failed: optCount,
  completions: optCount,
  parallelism: optCount,
  start_time: optTime,
  completion_time: optTime,
  last_schedule_time: optTime,
  /** Complete, Failed, Running, Suspended or Scheduled. */
  status: optText(LIMITS.short),
  owner_cronjob: optText(LIMITS.name),
  containers: list(
    obj({
      name: requiredName(),
      image: optText(LIMITS.text),
    }),
  ),
  annotations,
});

export const hpaRowSchema = obj({
  ...namespaced,
  target: orDefault(
    obj({
      kind: optText(LIMITS.short),
      name: optText(LIMITS.name),
      api_version: optText(LIMITS.name),
    }),
    () => ({ kind: null, name: null, api_version: null }),
  ),
  min_replicas: optCount,
  max_replicas: optCount,
  current_replicas: optCount,
  desired_replicas: optCount,
  metrics: list(
    obj({
      type: optText(LIMITS.short),
      name: optText(LIMITS.name),
      /** Display strings: "70%", "500m", "100". */
      target: optText(LIMITS.short),
      current: optText(LIMITS.short),
    }),
  ),
  conditions,
});

export const networkPolicyRowSchema = obj({
  ...namespaced,
  pod_selector: orDefault(jsonObject, () => ({})),
  policy_types: list(text(LIMITS.short)),
  ingress: list(jsonObject),
  egress: list(jsonObject),
  annotations,
});

export const resourceQuotaRowSchema = obj({
  ...namespaced,
  hard: stringMap(LIMITS.labelKey, LIMITS.quantity),
  used: stringMap(LIMITS.labelKey, LIMITS.quantity),
  scopes: list(text(LIMITS.short)),
});

export const endpointSliceRowSchema = obj({
  ...namespaced,
  service_name: optText(LIMITS.name),
  address_type: optText(LIMITS.short),
  endpoints: list(
    obj({
      addresses: list(text(LIMITS.text)),
      ready: optBool,
      serving: optBool,
      terminating: optBool,
      node_name: optText(LIMITS.name),
      target_ref: z
        .object({
          kind: optText(LIMITS.short),
          name: optText(LIMITS.name),
        })
        .nullable()
        .default(null),
    }),
  ),
  ports: list(
    obj({
      name: optText(LIMITS.short),
      protocol: optText(LIMITS.short),
      port: count.nullable().default(null),
    }),
  ),
});

// ------------------------------------------------ argo cd (v1.1, optional)

/**
 * One Argo CD Application, names and states only: never Helm values,
 * parameters, plugin env, patches or annotations (unknown fields are
 * dropped, so an agent that sent them would not get them stored). A
 * `repo_url` that still carries userinfo refuses the message.
 */
export const argocdApplicationSchema = obj({
  ...namespaced,
  project: optText(LIMITS.name),
  destination: orDefault(
    obj({
      server: optText(LIMITS.text),
      name: optText(LIMITS.name),
      namespace: optText(LIMITS.namespace),
    }),
    () => ({ server: null, name: null, namespace: null }),
  ),
  source: orDefault(
    obj({
      repo_url: text(LIMITS.text)
        .refine((url) => !repoUrlHasUserinfo(url), {
          error: 'carries credentials (userinfo); the agent must strip them',
        })
        .nullable()
        .default(null),
      path: optText(LIMITS.text),
      chart: optText(LIMITS.name),
      target_revision: optText(LIMITS.name),
    }),
    () => ({ repo_url: null, path: null, chart: null, target_revision: null }),
  ),
  sync_status: optText(LIMITS.short),
  health_status: optText(LIMITS.short),
  revision: optText(LIMITS.name),
  operation: obj({
    phase: optText(LIMITS.short),
    started_at: optTime,
    finished_at: optTime,
    /** `operation.initiatedBy.username`, or `automated`. */
    initiated_by: optText(LIMITS.name),
  })
    .nullable()
    .default(null),
  resources: list(
    obj({
      group: optText(LIMITS.name),
      kind: optText(LIMITS.short),
      namespace: optText(LIMITS.namespace),
      name: optText(LIMITS.name),
    }),
  ),
});

// -------------------------------------------------------------- envelope

export const clusterSchema = obj({
  name: requiredName(),
  /** The kube-system namespace's UID. */
  uid: optText(LIMITS.short),
  display_name: optText(LIMITS.name),
  version: optText(LIMITS.short),
  platform: optText(LIMITS.short),
  distribution: optText(LIMITS.name),
  api_server_url: optText(LIMITS.text),
  cluster_cidr: optText(LIMITS.short),
  service_cidr: optText(LIMITS.short),
  dns_domain: optText(LIMITS.name),
  cloud_provider: optText(LIMITS.short),
  cloud_region: optText(LIMITS.short),
  cloud_account_id: optText(LIMITS.short),
  status: z.enum(CLUSTER_STATUSES).nullable().default(null),
});

export const collectionSchema = obj({
  excluded_namespaces: list(text(LIMITS.namespace)),
  pods_truncated: orDefault(z.boolean(), () => false),
  pods_total: optCount,
  events_truncated: orDefault(z.boolean(), () => false),
});

/** Either case; both the body and the subject lower-case it. */
const agentId = z
  .string()
  .regex(UUID_PATTERN, { error: 'expected a UUID' })
  .transform((v) => v.toLowerCase());

/** A kind array: absent or null is `undefined` ("not collected"). */
const kindArray = <T extends z.ZodType>(row: T) => nullAsAbsent(z.array(row));

/** The row schema of each kind array. */
export const ROW_SCHEMAS = {
  nodes: nodeRowSchema,
  namespaces: namespaceRowSchema,
  workloads: workloadRowSchema,
  pods: podRowSchema,
  services: serviceRowSchema,
  ingresses: ingressRowSchema,
  pvcs: pvcRowSchema,
  events: eventRowSchema,
  jobs: jobRowSchema,
  hpas: hpaRowSchema,
  network_policies: networkPolicyRowSchema,
  resource_quotas: resourceQuotaRowSchema,
  endpoint_slices: endpointSliceRowSchema,
} as const satisfies Record<KindKey, z.ZodType>;

/** The message's fields, kind arrays at their place, each kind's rows by `row`. */
function inventoryShape<T extends Record<KindKey, z.ZodType>>(rows: T) {
  return {
    type: z.literal('kubernetes'),
    schema_version: z.literal(SCHEMA_VERSION),
    agent_id: agentId,
    agent_version: optText(LIMITS.short),
    timestamp: time,
    cluster: clusterSchema,
    nodes: kindArray(rows.nodes as T['nodes']),
    namespaces: kindArray(rows.namespaces as T['namespaces']),
    workloads: kindArray(rows.workloads as T['workloads']),
    pods: kindArray(rows.pods as T['pods']),
    services: kindArray(rows.services as T['services']),
    ingresses: kindArray(rows.ingresses as T['ingresses']),
    pvcs: kindArray(rows.pvcs as T['pvcs']),
    events: kindArray(rows.events as T['events']),
    jobs: kindArray(rows.jobs as T['jobs']),
    hpas: kindArray(rows.hpas as T['hpas']),
    network_policies: kindArray(rows.network_policies as T['network_policies']),
    resource_quotas: kindArray(rows.resource_quotas as T['resource_quotas']),
    endpoint_slices: kindArray(rows.endpoint_slices as T['endpoint_slices']),
    collection: collectionSchema.nullable().default(null),
    /** v1.1: absent or null is `undefined` (not collected, never pruned). */
    argocd_applications: kindArray(argocdApplicationSchema),
  };
}

export const inventorySchema = obj(inventoryShape(ROW_SCHEMAS));

const anyRow = z.unknown();
/**
 * The message with every field checked except the rows of its kind arrays:
 * each array's shape is checked (an array, or absent), its rows are kept
 * as sent, by reference, for the sync to validate the ones that changed.
 */
export const envelopeSchema = obj(
  inventoryShape(
    Object.fromEntries(KIND_KEYS.map((k) => [k, anyRow])) as Record<
      KindKey,
      typeof anyRow
    >,
  ),
);

/** The parsed, normalized message. */
export type Inventory = z.output<typeof inventorySchema>;
/** What an agent may send (optional fields may be left out). */
export type InventoryInput = z.input<typeof inventorySchema>;

export type Cluster = z.output<typeof clusterSchema>;
export type Collection = z.output<typeof collectionSchema>;
export type Condition = z.output<typeof conditionSchema>;
export type NodeRow = z.output<typeof nodeRowSchema>;
export type NamespaceRow = z.output<typeof namespaceRowSchema>;
export type WorkloadRow = z.output<typeof workloadRowSchema>;
export type WorkloadContainer = z.output<typeof workloadContainerSchema>;
export type PodRow = z.output<typeof podRowSchema>;
export type PodContainer = z.output<typeof podContainerSchema>;
export type ServiceRow = z.output<typeof serviceRowSchema>;
export type IngressRow = z.output<typeof ingressRowSchema>;
export type PvcRow = z.output<typeof pvcRowSchema>;
export type EventRow = z.output<typeof eventRowSchema>;
export type JobRow = z.output<typeof jobRowSchema>;
export type HpaRow = z.output<typeof hpaRowSchema>;
export type NetworkPolicyRow = z.output<typeof networkPolicyRowSchema>;
export type ResourceQuotaRow = z.output<typeof resourceQuotaRowSchema>;
export type EndpointSliceRow = z.output<typeof endpointSliceRowSchema>;
export type ArgocdApplication = z.output<typeof argocdApplicationSchema>;

/** The row type of each kind array. */
export type KindRow = {
  [K in KindKey]: NonNullable<Inventory[K]>[number];
};

// --------------------------------------------------------------- parsing

/*
 * The whole path: every row parsed and validated. The sync worker's path,
 * which leaves rows as sent until the sync reads them, is decode.ts.
 */

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The version gate, run before anything else is read: a message of another
 * version is refused whole, with one clear reason, never half-read.
 */
export function checkVersion(input: unknown): void {
  if (!isPlainObject(input)) {
    throw new RejectedInventoryError('inventory: expected a JSON object');
  }
  const version = input.schema_version;
  if (version === undefined) {
    throw new RejectedInventoryError('schema_version: required');
  }
  if (typeof version !== 'number' || !Number.isInteger(version)) {
    throw new RejectedInventoryError('schema_version: expected an integer');
  }
  if (version !== SCHEMA_VERSION) {
    throw new RejectedInventoryError(
      `schema_version ${version} is not supported: this backend reads schema_version ${SCHEMA_VERSION}`,
    );
  }
}

/** Validates and normalizes a decoded message, or throws a refusal. */
export function parseInventory(input: unknown): Inventory {
  checkVersion(input);
  const result = inventorySchema.safeParse(input, { error: errorMap });
  if (!result.success) {
    throw new RejectedInventoryError(formatIssues(result.error), {
      cause: result.error,
    });
  }
  return result.data;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** Decodes a UTF-8 JSON body (not compressed) and parses it. */
export function parseInventoryJson(
  body: Buffer | Uint8Array | string,
): Inventory {
  return parseInventory(decodeJson(body).value);
}

/** A body's text and its JSON value, or a refusal that quotes neither. */
export function decodeJson(body: Buffer | Uint8Array | string): {
  value: unknown;
  json: string;
} {
  let json: string;
  if (typeof body === 'string') {
    json = body;
  } else {
    try {
      json = utf8.decode(body);
    } catch (err) {
      throw new RejectedInventoryError('body: not valid UTF-8', { cause: err });
    }
  }
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    // The parser's message quotes the body; only its position is kept.
    const detail = err instanceof Error ? err.message : '';
    const position = /at position (\d+)/.exec(detail)?.[1];
    const what =
      position !== undefined
        ? `at position ${position}`
        : detail.includes('end of JSON input')
          ? 'unexpected end of input'
          : 'not JSON syntax';
    throw new RejectedInventoryError(`body: invalid JSON (${what})`, {
      cause: err,
    });
  }
  // Only a body that spells a NUL or a surrogate as an escape can hold one.
  if (mayHoldUnstorableText(json)) {
    const found = unstorableText(value);
    if (found !== undefined) {
      throw new RejectedInventoryError(
        `${formatPath(found.path)}: ${found.rule}`,
      );
    }
  }
  return { value, json };
}
