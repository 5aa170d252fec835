/**
 * The ten allow-listed cluster metrics queries (the spec's "Cluster
 * Metrics" table), defined once: the client picks a name and never sends
 * PromQL. `sel` is the cluster's own matchers (cluster_id and
 * environment_id from the stored row) and, for the per-workload queries,
 * namespace, workload and workload_kind; every value in it is quoted by
 * shared/metrics/promql.ts.
 *
 * | query                | PromQL                                                         | unit     |
 * |----------------------|----------------------------------------------------------------|----------|
 * | cpu_by_node          | max by (node) (node_cpu_usage_ratio{sel})                       | ratio    |
 * | memory_by_namespace  | sum by (namespace) (pod_memory_working_set_bytes{sel})          | bytes    |
 * | restarts             | the restarts rule over container_restarts_total{sel}           | restarts |
 * | pods_by_phase        | sum by (phase) (kubelet_pods{sel})                              | pods     |
 * | cpu_by_workload      | sum by (workload_kind, workload) (pod_cpu_usage_ratio{sel, namespace, workload!=""}) | cores |
 * | cpu_by_namespace     | sum by (namespace) (pod_cpu_usage_ratio{sel})                   | cores    |
 * | cpu_by_pod           | sum by (pod) (pod_cpu_usage_ratio{selW})                        | cores    |
 * | memory_by_pod        | sum by (pod) (pod_memory_working_set_bytes{selW})               | bytes    |
 * | restarts_by_workload | the restarts rule over container_restarts_total{selW}          | restarts |
 * | replicas             | max by (type) (k8s_workload_replicas{selW,host_id=""})          | replicas |
 *
 * The restarts rule: sum(clamp_min(last_over_time(x[W]) - last_over_time(x[W]
 * offset step), 0)), W = max(step, 5m). A per-step difference, not
 * increase(): a new series has no value a step ago and contributes nothing,
 * and a gap shorter than W is bridged.
 */
import { matcher } from './promql.ts';

export const METRICS_QUERY_NAMES = [
  'cpu_by_node',
  'memory_by_namespace',
  'restarts',
  'pods_by_phase',
  'cpu_by_workload',
  'cpu_by_namespace',
  'cpu_by_pod',
  'memory_by_pod',
  'restarts_by_workload',
  'replicas',
] as const;

export type MetricsQueryName = (typeof METRICS_QUERY_NAMES)[number];

/**
 * Which filters a query takes, all of them required: none, the namespace,
 * or the namespace, workload and workload kind. Every other filter is
 * refused, so a caller never believes a filter was applied when it was not.
 */
export type MetricsQueryScope = 'cluster' | 'namespace' | 'workload';

export type MetricsUnit =
  | 'ratio'
  | 'bytes'
  | 'restarts'
  | 'pods'
  | 'cores'
  | 'replicas';

/** The matchers a query's selector is built from, unquoted. */
export interface SelectorValues {
  clusterId: string;
  environmentId: string;
  namespace?: string | undefined;
  workload?: string | undefined;
  workloadKind?: string | undefined;
}

export interface MetricsQueryDefinition {
  name: MetricsQueryName;
  unit: MetricsUnit;
  scope: MetricsQueryScope;
  /** Accepts instant=true (the Namespaces tab's "used" column). */
  instant: boolean;
  /**
   * A point is already the total of its step (restarts): it is read as is,
   * never averaged or maxed over the step.
   */
  perStep: boolean;
  /** The PromQL for a selector's matchers (no braces) at a step. */
  promql(sel: string, stepSeconds: number): string;
}

const FIVE_MINUTES = 300;

/** The restarts rule over `container_restarts_total{sel}`. */
function restartsRule(sel: string, stepSeconds: number): string {
  const window = `${Math.max(stepSeconds, FIVE_MINUTES)}s`;
  const series = `container_restarts_total{${sel}}`;
  return (
    `sum(clamp_min(last_over_time(${series}[${window}])` +
    ` - last_over_time(${series}[${window}] offset ${stepSeconds}s), 0))`
  );
}

const gauge = (
  name: MetricsQueryName,
  unit: MetricsUnit,
  scope: MetricsQueryScope,
  promql: (sel: string) => string,
  instant = false,
): MetricsQueryDefinition => ({
  name,
  unit,
  scope,
  instant,
  perStep: false,
  promql,
});

const definitions: readonly MetricsQueryDefinition[] = [
  gauge(
    'cpu_by_node',
    'ratio',
    'cluster',
    (sel) => `max by (node) (node_cpu_usage_ratio{${sel}})`,
  ),
  gauge(
    'memory_by_namespace',
    'bytes',
    'cluster',
    (sel) => `sum by (namespace) (pod_memory_working_set_bytes{${sel}})`,
    true,
  ),
  {
    name: 'restarts',
    unit: 'restarts',
    scope: 'cluster',
    instant: false,
    perStep: true,
    promql: restartsRule,
  },
  gauge(
    'pods_by_phase',
    'pods',
    'cluster',
    (sel) => `sum by (phase) (kubelet_pods{${sel}})`,
  ),
  gauge(
    'cpu_by_workload',
    'cores',
    'namespace',
    (sel) =>
      `sum by (workload_kind, workload) (pod_cpu_usage_ratio{${sel},${matcher('workload', '!=', '')}})`,
  ),
  gauge(
    'cpu_by_namespace',
    'cores',
    'cluster',
    (sel) => `sum by (namespace) (pod_cpu_usage_ratio{${sel}})`,
    true,
  ),
  gauge(
    'cpu_by_pod',
    'cores',
    'workload',
    (sel) => `sum by (pod) (pod_cpu_usage_ratio{${sel}})`,
  ),
  gauge(
    'memory_by_pod',
    'bytes',
    'workload',
    (sel) => `sum by (pod) (pod_memory_working_set_bytes{${sel}})`,
  ),
  {
    name: 'restarts_by_workload',
    unit: 'restarts',
    scope: 'workload',
    instant: false,
    perStep: true,
    promql: restartsRule,
  },
  gauge(
    'replicas',
    'replicas',
    'workload',
    (sel) =>
      `max by (type) (k8s_workload_replicas{${sel},${matcher('host_id', '=', '')}})`,
  ),
];

export const METRICS_QUERIES: ReadonlyMap<string, MetricsQueryDefinition> =
  new Map(definitions.map((definition) => [definition.name, definition]));

/**
 * The matchers of a query's selector: the cluster and its environment, then
 * the filters its scope takes, in that order.
 */
export function selectorOf(
  scope: MetricsQueryScope,
  values: SelectorValues,
): string {
  const matchers = [
    matcher('cluster_id', '=', values.clusterId),
    matcher('environment_id', '=', values.environmentId),
  ];
  if (scope !== 'cluster') {
    matchers.push(matcher('namespace', '=', required(values.namespace)));
  }
  if (scope === 'workload') {
    matchers.push(
      matcher('workload', '=', required(values.workload)),
      matcher('workload_kind', '=', required(values.workloadKind)),
    );
  }
  return matchers.join(',');
}

function required(value: string | undefined): string {
  // The parameters' validation guarantees it; an empty matcher would widen.
  if (!value) throw new Error('a filter the query requires is missing');
  return value;
}
