/**
 * The collector: the objects an agent listed, as the apiserver served them,
 * to one wire message (wire-contract.md v1 and v1.1). Pure: no I/O, no
 * clock, so the agent, the seeder and the fixtures' tests all build the
 * message the same way, and the same input is the same bytes.
 *
 * Collection rules (spec: "Collection Limits and Filtering"), in order:
 * 1. Namespace exclusion on every namespaced kind, and on events by the
 *    namespace of the object they concern as well as their own.
 * 2. Then the pod limit (non-Running first, then restarts descending) and
 *    the event cap (newest last-seen first), so an excluded namespace never
 *    spends the budget of the kept ones.
 * 3. `collection` says what was excluded and cut.
 *
 * A list left undefined was not collected (forbidden, or its API absent):
 * its kind array is left out of the message, so the backend does not prune
 * it. An empty list is an empty array.
 */
import type {
  Amounts,
  InventoryInput,
  NodeRow,
  PodRow,
} from '../wire/inventory.ts';
import { argocdApplicationRow } from './argocd.ts';
import {
  array,
  byString,
  type K8sObject,
  nonEmpty,
  nsName,
  str,
} from './k8s.ts';
import { cpuMillicores, quantityBytes } from './quantity.ts';
import {
  endpointSliceRow,
  eventRow,
  eventSubjectNamespace,
  hpaRow,
  ingressRow,
  jobRow,
  namespaceRow,
  networkPolicyRow,
  nodeRow,
  ownerChain,
  podRow,
  pvcRow,
  resourceQuotaRow,
  serviceRow,
  workloadRow,
} from './rows.ts';

export const DEFAULT_POD_LIMIT = 5000;
/** The spec's hard-coded maxEvents. */
export const MAX_EVENTS = 1000;

/** What the agent listed; undefined = not collected. */
export interface ClusterObjects {
  /** `GET /version`. */
  version?: K8sObject;
  nodes?: K8sObject[];
  namespaces?: K8sObject[];
  deployments?: K8sObject[];
  statefulsets?: K8sObject[];
  daemonsets?: K8sObject[];
  /** argoproj.io/v1alpha1 Rollouts, as the dynamic client reads them. */
  rollouts?: K8sObject[];
  /** Read for owner chains only: Pod → ReplicaSet → Deployment/Rollout. */
  replicasets?: K8sObject[];
  pods?: K8sObject[];
  services?: K8sObject[];
  ingresses?: K8sObject[];
  pvcs?: K8sObject[];
  /** core/v1 or events.k8s.io/v1 Events (either shape). */
  events?: K8sObject[];
  jobs?: K8sObject[];
  cronjobs?: K8sObject[];
  hpas?: K8sObject[];
  networkPolicies?: K8sObject[];
  resourceQuotas?: K8sObject[];
  endpointSlices?: K8sObject[];
  argocdApplications?: K8sObject[];
  /** metrics.k8s.io/v1beta1 NodeMetrics and PodMetrics, when metrics-server answers. */
  nodeMetrics?: K8sObject[];
  podMetrics?: K8sObject[];
}

export interface CollectOptions {
  agentId: string;
  agentVersion: string;
  /** RFC 3339 snapshot time (the agent's clock). */
  timestamp: string;
  clusterName: string;
  apiServerUrl?: string;
  excludeNamespaces?: readonly string[];
  podLimit?: number;
  eventLimit?: number;
}

const hasName = (o: K8sObject) => nonEmpty(o?.metadata?.name) !== null;
const hasNamespace = (o: K8sObject) =>
  hasName(o) && nonEmpty(o.metadata.namespace) !== null;

/** Summed container usage of one metrics object. */
function usageOf(metrics: K8sObject): Amounts {
  const containers = metrics?.containers
    ? array(metrics.containers).map((c) => c?.usage)
    : [metrics?.usage];
  let cpu: number | null = null;
  let memory: number | null = null;
  for (const usage of containers) {
    const c = cpuMillicores(usage?.cpu);
    const m = quantityBytes(usage?.memory);
    if (c !== null) cpu = (cpu ?? 0) + c;
    if (m !== null) memory = (memory ?? 0) + m;
  }
  return { cpu_millicores: cpu, memory_bytes: memory };
}

function isRunning(pod: K8sObject): boolean {
  return pod?.status?.phase === 'Running';
}

function restarts(pod: K8sObject): number {
  let total = 0;
  for (const s of [
    ...array(pod?.status?.containerStatuses),
    ...array(pod?.status?.initContainerStatuses),
  ]) {
    if (typeof s?.restartCount === 'number') total += s.restartCount;
  }
  return total;
}

const key = (o: K8sObject) => nsName(o.metadata.namespace, o.metadata.name);

/**
 * The pods kept under the limit: non-Running first, then most restarts,
 * then by namespace/name so the cut is the same on every run. The kept
 * pods stay in the order they were listed.
 */
export function podsWithinLimit<T>(pods: T[], limit: number): T[] {
  if (pods.length <= limit) return pods;
  const ranked = pods
    .map((pod, index) => ({
      pod,
      index,
      restarts: restarts(pod),
      running: isRunning(pod),
    }))
    .sort(
      (a, b) =>
        Number(a.running) - Number(b.running) ||
        b.restarts - a.restarts ||
        byString(key(a.pod), key(b.pod)),
    );
  const kept = new Set(ranked.slice(0, Math.max(0, limit)).map((r) => r.index));
  return pods.filter((_, index) => kept.has(index));
}

/** The newest events by last seen (none last), at most `limit`. */
function newestEvents<
  T extends { last_seen: string | null; namespace: string; name: string },
>(events: T[], limit: number): T[] {
  const time = (e: T) =>
    e.last_seen === null ? Number.NEGATIVE_INFINITY : Date.parse(e.last_seen);
  return [...events]
    .sort(
      (a, b) =>
        time(b) - time(a) ||
        byString(nsName(a.namespace, a.name), nsName(b.namespace, b.name)),
    )
    .slice(0, Math.max(0, limit));
}

const PLATFORMS: [RegExp, string][] = [
  [/-eks-/, 'eks'],
  [/-gke\./, 'gke'],
  [/\+k3s/, 'k3s'],
  [/\+rke2/, 'rke2'],
];
const PROVIDERS: [string, string][] = [
  ['aws://', 'aws'],
  ['gce://', 'gcp'],
  ['azure://', 'azure'],
  ['digitalocean://', 'digitalocean'],
];

function clusterFacts(
  objects: ClusterObjects,
  options: CollectOptions,
  nodes: NodeRow[] | undefined,
): InventoryInput['cluster'] {
  const version = str(objects.version?.gitVersion);
  const providerId = nodes?.find((n) => n.provider_id)?.provider_id ?? null;
  const provider =
    PROVIDERS.find(([prefix]) => providerId?.startsWith(prefix))?.[1] ?? null;
  let platform = version
    ? (PLATFORMS.find(([re]) => re.test(version))?.[1] ?? null)
    : null;
  if (platform === null && provider === 'azure') platform = 'aks';
  const firstNode = array(objects.nodes)[0];
  const region =
    firstNode?.metadata?.labels?.['topology.kubernetes.io/region'] ??
    firstNode?.metadata?.labels?.['failure-domain.beta.kubernetes.io/region'] ??
    null;
  const kubeSystem = array(objects.namespaces).find(
    (n) => n?.metadata?.name === 'kube-system',
  );
  let status: 'healthy' | 'degraded' | 'unknown' = 'unknown';
  if (nodes && nodes.length > 0) {
    status = nodes.every((n) => n.status === 'Ready') ? 'healthy' : 'degraded';
  }
  return {
    name: options.clusterName,
    uid: str(kubeSystem?.metadata?.uid),
    version,
    platform,
    api_server_url: options.apiServerUrl ?? null,
    cloud_provider: provider,
    cloud_region: typeof region === 'string' ? region : null,
    status,
  };
}

/** Builds the inventory message from what the agent listed. */
export function buildInventory(
  objects: ClusterObjects,
  options: CollectOptions,
): InventoryInput {
  const excluded = new Set(options.excludeNamespaces ?? []);
  const kept = (list: K8sObject[] | undefined): K8sObject[] | undefined =>
    list?.filter((o) => hasNamespace(o) && !excluded.has(o.metadata.namespace));

  // 1. Exclusion, before any cap.
  const workloadObjects = [
    objects.deployments,
    objects.statefulsets,
    objects.daemonsets,
    objects.rollouts,
  ].every((l) => l === undefined)
    ? undefined
    : [
        ...(kept(objects.deployments) ?? []).map((o) => ({
          ...o,
          kind: 'Deployment',
        })),
        ...(kept(objects.statefulsets) ?? []).map((o) => ({
          ...o,
          kind: 'StatefulSet',
        })),
        ...(kept(objects.daemonsets) ?? []).map((o) => ({
          ...o,
          kind: 'DaemonSet',
        })),
        ...(kept(objects.rollouts) ?? []).map((o) => ({
          ...o,
          kind: 'Rollout',
        })),
      ];
  const allPods = kept(objects.pods);
  const services = kept(objects.services);
  const events = kept(objects.events)?.filter((e) => {
    const about = eventSubjectNamespace(e);
    return about === null || !excluded.has(about);
  });
  const jobObjects =
    objects.jobs === undefined && objects.cronjobs === undefined
      ? undefined
      : [
          ...(kept(objects.jobs) ?? []).map((o) => ({ ...o, kind: 'Job' })),
          ...(kept(objects.cronjobs) ?? []).map((o) => ({
            ...o,
            kind: 'CronJob',
          })),
        ];

  // 2. The caps.
  const podLimit = options.podLimit ?? DEFAULT_POD_LIMIT;
  const pods = allPods && podsWithinLimit(allPods, podLimit);
  const eventRows = events?.map(eventRow);
  const eventLimit = options.eventLimit ?? MAX_EVENTS;
  const keptEvents = eventRows && newestEvents(eventRows, eventLimit);

  // Derived facts, from everything kept (before the pod cut for counts).
  const podMetrics = new Map<string, Amounts>();
  for (const m of objects.podMetrics ?? []) {
    if (hasNamespace(m)) podMetrics.set(key(m), usageOf(m));
  }
  const nodeMetrics = new Map<string, Amounts>();
  for (const m of objects.nodeMetrics ?? []) {
    if (hasName(m)) nodeMetrics.set(String(m.metadata.name), usageOf(m));
  }
  const podsPerNode = new Map<string, number>();
  const perNamespace = new Map<
    string,
    { workloads: number; pods: number; services: number }
  >();
  const nsCounts = (ns: string) => {
    let c = perNamespace.get(ns);
    if (c === undefined) {
      c = { workloads: 0, pods: 0, services: 0 };
      perNamespace.set(ns, c);
    }
    return c;
  };
  for (const pod of allPods ?? []) nsCounts(pod.metadata.namespace).pods += 1;
  // A node's pod count is the node's own fact, which exclusion leaves alone
  // (nodes are cluster-scoped): every pod scheduled on it counts, as against
  // its allocatable pods.
  for (const pod of objects.pods?.filter(hasNamespace) ?? []) {
    const node = nonEmpty(pod.spec?.nodeName);
    if (node) podsPerNode.set(node, (podsPerNode.get(node) ?? 0) + 1);
  }
  for (const w of workloadObjects ?? [])
    nsCounts(w.metadata.namespace).workloads += 1;
  for (const s of services ?? []) nsCounts(s.metadata.namespace).services += 1;

  const endpointSlices = kept(objects.endpointSlices);
  const readyEndpoints = new Map<string, number>();
  for (const slice of endpointSlices ?? []) {
    const service = slice.metadata.labels?.['kubernetes.io/service-name'];
    if (typeof service !== 'string') continue;
    const ready = array(slice.endpoints)
      .filter((e) => e?.conditions?.ready !== false)
      .reduce((n, e) => n + array(e?.addresses).length, 0);
    const k = nsName(slice.metadata.namespace, service);
    readyEndpoints.set(k, (readyEndpoints.get(k) ?? 0) + ready);
  }

  const chain = ownerChain([
    ...(kept(objects.replicasets) ?? []).map((o) => ({
      ...o,
      kind: 'ReplicaSet',
    })),
    ...(kept(objects.jobs) ?? []).map((o) => ({ ...o, kind: 'Job' })),
  ]);

  const nodes = objects.nodes
    ?.filter(hasName)
    .map((n) =>
      nodeRow(
        n,
        nodeMetrics.get(String(n.metadata.name)) ?? null,
        objects.pods ? (podsPerNode.get(String(n.metadata.name)) ?? 0) : null,
      ),
    );
  const podRows: PodRow[] | undefined = pods?.map((p) =>
    podRow(p, chain, podMetrics.get(key(p)) ?? null),
  );
  const argocd = kept(objects.argocdApplications)
    ?.map(argocdApplicationRow)
    .filter((a) => a !== undefined);

  const message: InventoryInput = {
    type: 'kubernetes',
    schema_version: 1,
    agent_id: options.agentId,
    agent_version: options.agentVersion,
    timestamp: options.timestamp,
    cluster: clusterFacts(objects, options, nodes),
  };
  const put = <K extends keyof InventoryInput>(
    k: K,
    v: InventoryInput[K] | undefined,
  ) => {
    if (v !== undefined) message[k] = v;
  };
  put('nodes', nodes);
  put(
    'namespaces',
    objects.namespaces
      ?.filter((n) => hasName(n) && !excluded.has(n.metadata.name))
      .map((n) =>
        namespaceRow(
          n,
          perNamespace.get(n.metadata.name) ?? {
            workloads: 0,
            pods: 0,
            services: 0,
          },
        ),
      ),
  );
  put('workloads', workloadObjects?.map(workloadRow));
  put('pods', podRows);
  put(
    'services',
    services?.map((s) =>
      serviceRow(s, endpointSlices ? (readyEndpoints.get(key(s)) ?? 0) : null),
    ),
  );
  put('ingresses', kept(objects.ingresses)?.map(ingressRow));
  put('pvcs', kept(objects.pvcs)?.map(pvcRow));
  put('events', keptEvents);
  put('jobs', jobObjects?.map(jobRow));
  put('hpas', kept(objects.hpas)?.map(hpaRow));
  put('network_policies', kept(objects.networkPolicies)?.map(networkPolicyRow));
  put('resource_quotas', kept(objects.resourceQuotas)?.map(resourceQuotaRow));
  put('endpoint_slices', endpointSlices?.map(endpointSliceRow));
  message.collection = {
    excluded_namespaces: [...excluded].sort(byString),
    pods_truncated:
      allPods !== undefined &&
      pods !== undefined &&
      pods.length < allPods.length,
    pods_total: allPods?.length ?? null,
    events_truncated:
      eventRows !== undefined &&
      keptEvents !== undefined &&
      keptEvents.length < eventRows.length,
  };
  put('argocd_applications', argocd);
  return message;
}
