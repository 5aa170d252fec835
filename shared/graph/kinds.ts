/**
 * The objects the relations graph draws, by kind: the table each is stored
 * in, whether it is namespaced, its one-word status as a SQL expression, and
 * the record route a node of it links to (`ref`). Every relation query
 * (relations.ts) returns its far end through `nodeColumns`, so all of them
 * produce rows of one shape: `id, kind, namespace, name, status`.
 */

/** The kinds a walk may start from (the route's `kind`). */
export const GRAPH_ROOT_KINDS = [
  'Node',
  'Namespace',
  'Pod',
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'Rollout',
  'Job',
  'CronJob',
  'Service',
  'EndpointSlice',
  'Ingress',
  'PersistentVolumeClaim',
  'HorizontalPodAutoscaler',
  'NetworkPolicy',
  'ResourceQuota',
  'Application',
] as const;

export type GraphRootKind = (typeof GRAPH_ROOT_KINDS)[number];
/** A CMDB host is drawn too, reached from its node only. */
export type GraphKind = GraphRootKind | 'Host';

interface KindDefinition {
  table: string;
  namespaced: boolean;
  /** SQL over the row's alias: the object's one-word state, or null. */
  status: (t: string) => string;
  /** The record route its node links to. */
  ref?: 'nodes' | 'workloads' | 'hosts';
  /** The table holds several kinds: its `kind` column says which. */
  sharedTable?: true;
  /** The name column, when not `name`. */
  nameColumn?: string;
  /**
   * The status costs enough to be read once per object a hop keeps, not
   * once per edge that reaches it (relations.ts, hopSql).
   */
  statusPerObject?: true;
}

const RATIO = (ready: string, desired: string) => (t: string) =>
  `case when ${t}.${desired} is null then null
        else coalesce(${t}.${ready}, 0) || '/' || ${t}.${desired} end`;
const column = (name: string) => (t: string) => `${t}.${name}`;
const NONE = () => 'null';

const workload: KindDefinition = {
  table: 'k8s_workloads',
  namespaced: true,
  status: RATIO('replicas_ready', 'replicas_desired'),
  ref: 'workloads',
  sharedTable: true,
};

const job: KindDefinition = {
  table: 'k8s_jobs',
  namespaced: true,
  status: column('status'),
  sharedTable: true,
};

export const GRAPH_KINDS: Record<GraphKind, KindDefinition> = {
  Node: {
    table: 'k8s_nodes',
    namespaced: false,
    status: column('status'),
    ref: 'nodes',
  },
  Namespace: {
    table: 'k8s_namespaces',
    namespaced: false,
    status: column('status'),
  },
  Pod: { table: 'k8s_pods', namespaced: true, status: column('phase') },
  Deployment: workload,
  StatefulSet: workload,
  DaemonSet: workload,
  Rollout: workload,
  Job: job,
  CronJob: job,
  Service: { table: 'k8s_services', namespaced: true, status: column('type') },
  EndpointSlice: {
    table: 'k8s_endpoint_slices',
    namespaced: true,
    // Ready endpoints of all; an endpoint without `ready` counts as ready,
    // as Kubernetes reads a nil condition. Read once per slice a hop keeps:
    // per edge, a thousand-endpoint Service's pods each reaching their
    // slice, it cost 0.1 ms a row.
    status: (t) => `jsonb_array_length(${t}.endpoints)
        - jsonb_array_length(jsonb_path_query_array(${t}.endpoints, '$[*] ? (@.ready == false)'))
        || '/' || jsonb_array_length(${t}.endpoints)`,
    statusPerObject: true,
  },
  Ingress: { table: 'k8s_ingresses', namespaced: true, status: NONE },
  PersistentVolumeClaim: {
    table: 'k8s_pvcs',
    namespaced: true,
    status: column('phase'),
  },
  HorizontalPodAutoscaler: {
    table: 'k8s_hpas',
    namespaced: true,
    status: RATIO('current_replicas', 'desired_replicas'),
  },
  NetworkPolicy: {
    table: 'k8s_network_policies',
    namespaced: true,
    status: NONE,
  },
  ResourceQuota: {
    table: 'k8s_resource_quotas',
    namespaced: true,
    status: NONE,
  },
  Application: {
    table: 'argocd_applications',
    namespaced: true,
    status: (t) => `coalesce(${t}.health_status, ${t}.sync_status)`,
  },
  Host: {
    table: 'hosts',
    namespaced: false,
    status: NONE,
    ref: 'hosts',
    nameColumn: 'hostname',
  },
};

/**
 * A row's node columns under alias `t`: `id, kind, namespace, name,
 * status`. A table of several kinds reports its row's own kind.
 */
export function nodeColumns(
  kind: GraphKind,
  t = 't',
  { statusLater = false } = {},
): string {
  const def = GRAPH_KINDS[kind];
  const kindSql = def.sharedTable ? `${t}.kind` : `'${kind}'::text`;
  const namespace = def.namespaced ? `${t}.namespace` : 'null::text';
  return `${t}.id, ${kindSql} as kind, ${namespace} as namespace,
          ${t}.${def.nameColumn ?? 'name'} as name,
          ${statusLater ? 'null::text' : `(${def.status(t)})::text`} as status`;
}

/** Keeps a table of several kinds to `kinds`; `true` for the others. */
export function kindFilter(kinds: readonly GraphKind[], t: string): string {
  const first = kinds[0];
  if (first === undefined || !GRAPH_KINDS[first].sharedTable) return 'true';
  return `${t}.kind in (${kinds.map((k) => `'${k}'`).join(', ')})`;
}

/** The node id: `Kind/namespace/name`, `Kind/name`, or `Host/<id>`. */
export function nodeIdOf(node: {
  kind: string;
  namespace: string | null;
  name: string;
  rowId: string;
}): string {
  if (node.kind === 'Host') return `Host/${node.rowId}`;
  return node.namespace === null
    ? `${node.kind}/${node.name}`
    : `${node.kind}/${node.namespace}/${node.name}`;
}

/** The record route of a node that has one. */
export function refOf(
  kind: string,
  rowId: string,
  clusterId: string,
): string | undefined {
  const ref = GRAPH_KINDS[kind as GraphKind]?.ref;
  switch (ref) {
    case 'nodes':
      return `/api/v1/clusters/${clusterId}/nodes/${rowId}`;
    case 'workloads':
      return `/api/v1/clusters/${clusterId}/workloads/${rowId}`;
    case 'hosts':
      return `/api/v1/hosts/${rowId}`;
    default:
      return undefined;
  }
}

/** The statement (and its values) that finds the root object. */
export function rootQuery(
  kind: GraphRootKind,
  clusterId: string,
  namespace: string | undefined,
  name: string,
): { sql: string; values: unknown[] } {
  const def = GRAPH_KINDS[kind];
  const values: unknown[] = [clusterId, name];
  const where = ['t.cluster_id = $1', 't.name = $2'];
  if (def.namespaced) {
    values.push(namespace);
    where.push(`t.namespace = $${values.length}`);
  }
  if (def.sharedTable) {
    values.push(kind);
    where.push(`t.kind = $${values.length}`);
  }
  return {
    sql: `select ${nodeColumns(kind)} from ${def.table} t
          where ${where.join(' and ')}`,
    values,
  };
}
