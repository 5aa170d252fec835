/**
 * Every API resource the agent reads, once: the collection lists them, the
 * live reads get single objects of them, and the ClusterRole in
 * infra/agent/ grants exactly these (a test holds the two together).
 * Secrets and ConfigMaps are not here and are never read.
 */
import type { ClusterObjects } from '../collector/collect.ts';
import type { ManifestKind } from '../live/kube-query.ts';

export interface ApiResource {
  group: string;
  version: string;
  /** The plural resource name in the API path and in RBAC. */
  resource: string;
  namespaced: boolean;
  /**
   * A CRD or an aggregated API (Argo Rollouts, Argo CD, metrics-server)
   * that a cluster may not serve: listed only when its group's discovery
   * lists it, and not collected (never a failed collection) when the
   * apiserver says it is not here (shared/agent/discovery.ts).
   */
  optional?: boolean;
}

const core = (resource: string, namespaced = true): ApiResource => ({
  group: '',
  version: 'v1',
  resource,
  namespaced,
});
const api = (
  group: string,
  version: string,
  resource: string,
  optional = false,
): ApiResource => ({ group, version, resource, namespaced: true, optional });

/** What the collection lists, by the collector's input field. */
export const COLLECTED: Record<
  Exclude<keyof ClusterObjects, 'version'>,
  ApiResource
> = {
  nodes: core('nodes', false),
  namespaces: core('namespaces', false),
  deployments: api('apps', 'v1', 'deployments'),
  statefulsets: api('apps', 'v1', 'statefulsets'),
  daemonsets: api('apps', 'v1', 'daemonsets'),
  rollouts: api('argoproj.io', 'v1alpha1', 'rollouts', true),
  replicasets: api('apps', 'v1', 'replicasets'),
  pods: core('pods'),
  services: core('services'),
  ingresses: api('networking.k8s.io', 'v1', 'ingresses'),
  pvcs: core('persistentvolumeclaims'),
  events: core('events'),
  jobs: api('batch', 'v1', 'jobs'),
  cronjobs: api('batch', 'v1', 'cronjobs'),
  hpas: api('autoscaling', 'v2', 'horizontalpodautoscalers'),
  networkPolicies: api('networking.k8s.io', 'v1', 'networkpolicies'),
  resourceQuotas: core('resourcequotas'),
  endpointSlices: api('discovery.k8s.io', 'v1', 'endpointslices'),
  argocdApplications: api('argoproj.io', 'v1alpha1', 'applications', true),
  nodeMetrics: {
    group: 'metrics.k8s.io',
    version: 'v1beta1',
    resource: 'nodes',
    namespaced: false,
    optional: true,
  },
  podMetrics: api('metrics.k8s.io', 'v1beta1', 'pods', true),
};

/** The objects a live manifest read may return, by kind. */
export const MANIFEST_RESOURCES: Record<ManifestKind, ApiResource> = {
  Deployment: COLLECTED.deployments,
  StatefulSet: COLLECTED.statefulsets,
  DaemonSet: COLLECTED.daemonsets,
  Rollout: COLLECTED.rollouts,
  ReplicaSet: COLLECTED.replicasets,
  Pod: COLLECTED.pods,
  Service: COLLECTED.services,
  Ingress: COLLECTED.ingresses,
  HorizontalPodAutoscaler: COLLECTED.hpas,
  Job: COLLECTED.jobs,
  CronJob: COLLECTED.cronjobs,
  NetworkPolicy: COLLECTED.networkPolicies,
  PersistentVolumeClaim: COLLECTED.pvcs,
};

/** StatefulSet and DaemonSet history, read by the live revisions query. */
export const CONTROLLER_REVISIONS = api('apps', 'v1', 'controllerrevisions');
/** The live logs read: `get` only. */
export const POD_LOG = { group: '', resource: 'pods/log' } as const;

/** `/api/v1/...` or `/apis/{group}/{version}/...`, namespaced when given. */
export function resourcePath(
  r: ApiResource,
  namespace?: string,
  name?: string,
): string {
  const base =
    r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns =
    r.namespaced && namespace !== undefined
      ? `/namespaces/${encodeURIComponent(namespace)}`
      : '';
  const one = name === undefined ? '' : `/${encodeURIComponent(name)}`;
  return `${base}${ns}/${r.resource}${one}`;
}

/** The group/version's discovery path: its APIResourceList. */
export function groupPath(r: ApiResource): string {
  return r.group === '' ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
}

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/** Read-only: the verbs the ClusterRole grants on every resource it names. */
export const READ_VERBS = ['get', 'list', 'watch'];

/**
 * The ClusterRole's rules, from the lists above: one rule per API group
 * (groups and resources in code-point order) with the read verbs, and
 * `pods/log` with `get` alone. infra/agent/clusterrole.yaml must say
 * exactly this; its test holds the two together.
 */
export function clusterRoleRules(): PolicyRule[] {
  const byGroup = new Map<string, Set<string>>();
  for (const r of [...Object.values(COLLECTED), CONTROLLER_REVISIONS]) {
    const resources = byGroup.get(r.group) ?? new Set<string>();
    resources.add(r.resource);
    byGroup.set(r.group, resources);
  }
  const order = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [
    ...[...byGroup.keys()].sort(order).map((group) => ({
      apiGroups: [group],
      resources: [...(byGroup.get(group) ?? [])].sort(order),
      verbs: [...READ_VERBS],
    })),
    {
      apiGroups: [POD_LOG.group],
      resources: [POD_LOG.resource],
      verbs: ['get'],
    },
  ];
}
