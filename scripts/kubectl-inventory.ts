/**
 * The seeder's "real cluster" source: reads the current kubectl context's
 * objects (`kubectl get <kind> -A -o json`) and converts them to the wire
 * format, best effort, for the main kinds. A kind kubectl cannot list (RBAC,
 * missing API) is left out of the message: "not collected", never pruned.
 * Values that could be secrets (env values, last-applied annotations) are
 * never copied.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { InventoryInput } from '../shared/wire/inventory.ts';

const run = promisify(execFile);

// biome-ignore lint/suspicious/noExplicitAny: Kubernetes objects as kubectl prints them.
type K8s = any;

/** True when kubectl is on PATH and its context answers. */
export async function kubectlConnected(timeoutMs = 8_000): Promise<boolean> {
  try {
    await run('kubectl', ['version', '-o', 'json', '--request-timeout=5s'], {
      timeout: timeoutMs,
    });
    return true;
  } catch {
    return false;
  }
}

async function list(resource: string): Promise<K8s[] | undefined> {
  try {
    const { stdout } = await run(
      'kubectl',
      ['get', resource, '-A', '-o', 'json', '--request-timeout=20s'],
      { timeout: 30_000, maxBuffer: 512 * 1024 * 1024 },
    );
    return (JSON.parse(stdout) as { items?: K8s[] }).items ?? [];
  } catch {
    return undefined;
  }
}

/** Kubernetes CPU quantity → millicores ("250m", "2", "0.5"). */
export function cpuMillicores(q: unknown): number | null {
  if (typeof q !== 'string' && typeof q !== 'number') return null;
  const s = String(q).trim();
  const m = /^([0-9.]+)(m|u|n)?$/.exec(s);
  if (!m) return null;
  const v = Number(m[1]);
  const scale = { m: 1, u: 1e-3, n: 1e-6 }[m[2] ?? ''] ?? 1000;
  return Math.round(v * scale);
}

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
};

/** Kubernetes memory/storage quantity → bytes ("128Mi", "1G", "1e3"). */
export function bytes(q: unknown): number | null {
  if (typeof q !== 'string' && typeof q !== 'number') return null;
  const s = String(q).trim();
  const m = /^([0-9.]+(?:e[0-9]+)?)([KMGTP]i|[kMGTP])?$/.exec(s);
  if (!m) return null;
  const scale = BYTE_UNITS[m[2] ?? ''];
  return scale === undefined ? null : Math.round(Number(m[1]) * scale);
}

const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;

const amounts = (r: K8s) => ({
  cpu_millicores: cpuMillicores(r?.cpu),
  memory_bytes: bytes(r?.memory),
});

const NOISY_ANNOTATIONS = ['kubectl.kubernetes.io/last-applied-configuration'];
function annotations(meta: K8s): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(meta?.annotations ?? {})) {
    if (!NOISY_ANNOTATIONS.includes(k) && typeof v === 'string') out[k] = v;
  }
  return out;
}

const common = (o: K8s) => ({
  name: o.metadata.name as string,
  uid: o.metadata.uid ?? null,
  labels: o.metadata.labels ?? {},
  created_at: o.metadata.creationTimestamp ?? null,
});
const namespaced = (o: K8s) => ({
  namespace: o.metadata.namespace as string,
  ...common(o),
});

const conditions = (cs: K8s[] | undefined) =>
  (cs ?? []).map((c) => ({
    type: c.type,
    status: c.status ?? null,
    reason: c.reason ?? null,
    message: c.message ?? null,
    last_transition_time: c.lastTransitionTime ?? null,
  }));

function node(o: K8s) {
  const labels = o.metadata.labels ?? {};
  const ready = (o.status?.conditions ?? []).find(
    (c: K8s) => c.type === 'Ready',
  );
  return {
    ...common(o),
    roles: Object.keys(labels)
      .filter((k) => k.startsWith('node-role.kubernetes.io/'))
      .map((k) => k.slice('node-role.kubernetes.io/'.length)),
    taints: (o.spec?.taints ?? []).map((t: K8s) => ({
      key: t.key,
      value: t.value ?? null,
      effect: t.effect ?? null,
    })),
    status:
      ready === undefined
        ? 'Unknown'
        : ready.status === 'True'
          ? 'Ready'
          : 'NotReady',
    conditions: conditions(o.status?.conditions),
    unschedulable: o.spec?.unschedulable ?? false,
    kubelet_version: o.status?.nodeInfo?.kubeletVersion ?? null,
    container_runtime: o.status?.nodeInfo?.containerRuntimeVersion ?? null,
    os_image: o.status?.nodeInfo?.osImage ?? null,
    kernel_version: o.status?.nodeInfo?.kernelVersion ?? null,
    capacity: {
      cpu_millicores: cpuMillicores(o.status?.capacity?.cpu),
      memory_bytes: bytes(o.status?.capacity?.memory),
      pods: Number(o.status?.capacity?.pods) || null,
    },
    allocatable: {
      cpu_millicores: cpuMillicores(o.status?.allocatable?.cpu),
      memory_bytes: bytes(o.status?.allocatable?.memory),
      pods: Number(o.status?.allocatable?.pods) || null,
    },
    addresses: (o.status?.addresses ?? []).map((a: K8s) => ({
      type: a.type,
      address: a.address,
    })),
    provider_id: o.spec?.providerID ?? null,
    instance_type:
      labels['node.kubernetes.io/instance-type'] ??
      labels['beta.kubernetes.io/instance-type'] ??
      null,
    zone:
      labels['topology.kubernetes.io/zone'] ??
      labels['failure-domain.beta.kubernetes.io/zone'] ??
      null,
  };
}

function workload(o: K8s) {
  const kind = o.kind as string;
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const desired =
    kind === 'DaemonSet'
      ? count(status.desiredNumberScheduled)
      : count(spec.replicas ?? 1);
  const labels = o.metadata.labels ?? {};
  const ann = annotations(o.metadata);
  return {
    ...namespaced(o),
    kind,
    replicas_desired: desired,
    replicas_ready: count(
      kind === 'DaemonSet' ? status.numberReady : (status.readyReplicas ?? 0),
    ),
    replicas_available: count(
      kind === 'DaemonSet'
        ? status.numberAvailable
        : (status.availableReplicas ?? 0),
    ),
    conditions: conditions(status.conditions),
    strategy: spec.strategy?.type ?? spec.updateStrategy?.type ?? null,
    service_account: spec.template?.spec?.serviceAccountName ?? null,
    containers: (spec.template?.spec?.containers ?? []).map((c: K8s) => ({
      name: c.name,
      image: c.image ?? null,
      ports: (c.ports ?? []).map((p: K8s) => ({
        name: p.name ?? null,
        container_port: count(p.containerPort),
        protocol: p.protocol ?? null,
      })),
      requests: amounts(c.resources?.requests),
      limits: amounts(c.resources?.limits),
    })),
    annotations: ann,
    helm_release: ann['meta.helm.sh/release-name'] ?? null,
    helm_chart: labels['helm.sh/chart'] ?? null,
  };
}

function pod(o: K8s, replicaSetOwners: Map<string, K8s>) {
  const statuses = new Map<string, K8s>();
  for (const s of [
    ...(o.status?.containerStatuses ?? []),
    ...(o.status?.initContainerStatuses ?? []),
  ]) {
    statuses.set(s.name, s);
  }
  const container = (c: K8s, init: boolean) => {
    const s = statuses.get(c.name);
    const state = s?.state ?? {};
    const terminated = state.terminated ?? s?.lastState?.terminated;
    return {
      name: c.name,
      image: c.image ?? null,
      init,
      ready: s?.ready ?? null,
      restart_count: count(s?.restartCount),
      state: state.running
        ? 'running'
        : state.waiting
          ? 'waiting'
          : state.terminated
            ? 'terminated'
            : null,
      waiting_reason: state.waiting?.reason ?? null,
      last_termination_reason: terminated?.reason ?? null,
      requests: amounts(c.resources?.requests),
      limits: amounts(c.resources?.limits),
    };
  };
  const containers = [
    ...(o.spec?.initContainers ?? []).map((c: K8s) => container(c, true)),
    ...(o.spec?.containers ?? []).map((c: K8s) => container(c, false)),
  ];
  const owner = (o.metadata.ownerReferences ?? []).find(
    (r: K8s) => r.controller,
  );
  let workloadKind: string | null = owner?.kind ?? null;
  let workloadName: string | null = owner?.name ?? null;
  if (owner?.kind === 'ReplicaSet') {
    const rs = replicaSetOwners.get(`${o.metadata.namespace}/${owner.name}`);
    workloadKind = rs?.kind ?? null;
    workloadName = rs?.name ?? null;
  }
  const main = containers.filter((c) => !c.init);
  const scheduled = (o.status?.conditions ?? []).find(
    (c: K8s) => c.type === 'PodScheduled',
  );
  return {
    ...namespaced(o),
    phase: o.status?.phase ?? null,
    node_name: o.spec?.nodeName ?? null,
    pod_ip: o.status?.podIP ?? null,
    host_ip: o.status?.hostIP ?? null,
    qos_class: o.status?.qosClass ?? null,
    owner_kind: owner?.kind ?? null,
    owner_name: owner?.name ?? null,
    workload_kind: workloadKind,
    workload_name: workloadName,
    containers,
    restart_count: main.reduce((n, c) => n + (c.restart_count ?? 0), 0),
    ready_containers: main.filter((c) => c.ready).length,
    total_containers: main.length,
    started_at: o.status?.startTime ?? null,
    pending_since:
      o.status?.phase === 'Pending'
        ? (scheduled?.lastTransitionTime ??
          o.metadata.creationTimestamp ??
          null)
        : null,
  };
}

function service(o: K8s) {
  const spec = o.spec ?? {};
  return {
    ...namespaced(o),
    type: spec.type ?? null,
    cluster_ip: spec.clusterIP ?? null,
    cluster_ips: spec.clusterIPs ?? [],
    external_ips: spec.externalIPs ?? [],
    load_balancer_ingress: (o.status?.loadBalancer?.ingress ?? [])
      .map((i: K8s) => i.ip ?? i.hostname)
      .filter(Boolean),
    ports: (spec.ports ?? []).map((p: K8s) => ({
      name: p.name ?? null,
      protocol: p.protocol ?? null,
      port: count(p.port),
      target_port: p.targetPort ?? null,
      node_port: count(p.nodePort),
    })),
    selector: spec.selector ?? {},
    annotations: annotations(o.metadata),
  };
}

function event(o: K8s) {
  const last =
    o.lastTimestamp ??
    o.series?.lastObservedTime ??
    o.eventTime ??
    o.firstTimestamp ??
    null;
  return {
    ...namespaced(o),
    type: o.type ?? null,
    reason: o.reason ?? null,
    message: o.message ?? null,
    involved_object: {
      kind: o.involvedObject?.kind ?? null,
      name: o.involvedObject?.name ?? null,
      namespace: o.involvedObject?.namespace ?? null,
      uid: o.involvedObject?.uid ?? null,
    },
    count: count(o.count ?? o.series?.count),
    first_seen: o.firstTimestamp ?? o.eventTime ?? null,
    last_seen: last,
    source_component: o.source?.component ?? null,
    reporting_controller: o.reportingComponent || null,
  };
}

function ingress(o: K8s) {
  return {
    ...namespaced(o),
    ingress_class: o.spec?.ingressClassName ?? null,
    rules: (o.spec?.rules ?? []).map((r: K8s) => ({
      host: r.host ?? null,
      paths: (r.http?.paths ?? []).map((p: K8s) => ({
        path: p.path ?? null,
        path_type: p.pathType ?? null,
        service: p.backend?.service?.name ?? null,
        port:
          p.backend?.service?.port?.number ??
          p.backend?.service?.port?.name ??
          null,
      })),
    })),
    tls: (o.spec?.tls ?? []).map((t: K8s) => ({
      hosts: t.hosts ?? [],
      secret_name: t.secretName ?? null,
    })),
    load_balancer: (o.status?.loadBalancer?.ingress ?? [])
      .map((i: K8s) => i.ip ?? i.hostname)
      .filter(Boolean),
    annotations: annotations(o.metadata),
  };
}

function pvc(o: K8s) {
  return {
    ...namespaced(o),
    phase: o.status?.phase ?? null,
    storage_class: o.spec?.storageClassName ?? null,
    capacity_bytes: bytes(o.status?.capacity?.storage),
    requested_bytes: bytes(o.spec?.resources?.requests?.storage),
    access_modes: o.spec?.accessModes ?? [],
    volume_name: o.spec?.volumeName ?? null,
    volume_mode: o.spec?.volumeMode ?? null,
    annotations: annotations(o.metadata),
  };
}

function job(o: K8s) {
  const isCron = o.kind === 'CronJob';
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const template = isCron ? spec.jobTemplate?.spec?.template : spec.template;
  const done = (status.conditions ?? []).find(
    (c: K8s) =>
      (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
  const owner = (o.metadata.ownerReferences ?? []).find(
    (r: K8s) => r.kind === 'CronJob',
  );
  return {
    ...namespaced(o),
    kind: isCron ? 'CronJob' : 'Job',
    schedule: isCron ? (spec.schedule ?? null) : null,
    suspend: spec.suspend ?? null,
    active: isCron ? (status.active ?? []).length : count(status.active),
    succeeded: isCron ? null : count(status.succeeded),
    failed: isCron ? null : count(status.failed),
    completions: isCron ? null : count(spec.completions),
    parallelism: isCron ? null : count(spec.parallelism),
    start_time: status.startTime ?? null,
    completion_time: status.completionTime ?? null,
    last_schedule_time: isCron ? (status.lastScheduleTime ?? null) : null,
    status: isCron
      ? spec.suspend
        ? 'Suspended'
        : 'Scheduled'
      : (done?.type ?? (spec.suspend ? 'Suspended' : 'Running')),
    owner_cronjob: owner?.name ?? null,
    containers: (template?.spec?.containers ?? []).map((c: K8s) => ({
      name: c.name,
      image: c.image ?? null,
    })),
    annotations: annotations(o.metadata),
  };
}

/** Converts the lists kubectl returned (undefined: not collected). */
export function toInventory(
  lists: Partial<Record<string, K8s[] | undefined>>,
  identity: { agentId: string; clusterName: string; timestamp: string },
): InventoryInput {
  const replicaSetOwners = new Map<string, K8s>();
  for (const rs of lists.replicasets ?? []) {
    const owner = (rs.metadata.ownerReferences ?? []).find(
      (r: K8s) => r.controller,
    );
    if (owner) {
      replicaSetOwners.set(`${rs.metadata.namespace}/${rs.metadata.name}`, {
        kind: owner.kind,
        name: owner.name,
      });
    }
  }
  const workloadsFrom = ['deployments', 'statefulsets', 'daemonsets'].map(
    (k) => lists[k],
  );
  const workloads = workloadsFrom.every((l) => l === undefined)
    ? undefined
    : workloadsFrom.flatMap((l) => (l ?? []).map(workload));
  const jobsFrom = [lists.jobs, lists.cronjobs];
  const jobs = jobsFrom.every((l) => l === undefined)
    ? undefined
    : jobsFrom.flatMap((l) => (l ?? []).map(job));
  const kubeSystem = (lists.namespaces ?? []).find(
    (n: K8s) => n.metadata.name === 'kube-system',
  );
  const nodes = lists.nodes?.map(node);
  const pods = lists.pods?.map((p) => pod(p, replicaSetOwners));
  const nodesReady = nodes?.every((n) => n.status === 'Ready') ?? true;
  return {
    type: 'kubernetes',
    schema_version: 1,
    agent_id: identity.agentId,
    agent_version: 'seed-kubectl',
    timestamp: identity.timestamp,
    cluster: {
      name: identity.clusterName,
      uid: kubeSystem?.metadata.uid ?? null,
      status: nodesReady ? 'healthy' : 'degraded',
    },
    ...(nodes ? { nodes } : {}),
    ...(lists.namespaces
      ? {
          namespaces: lists.namespaces.map((n) => ({
            ...common(n),
            status: n.status?.phase ?? null,
          })),
        }
      : {}),
    ...(workloads ? { workloads } : {}),
    ...(pods ? { pods } : {}),
    ...(lists.services ? { services: lists.services.map(service) } : {}),
    ...(lists.ingresses ? { ingresses: lists.ingresses.map(ingress) } : {}),
    ...(lists.persistentvolumeclaims
      ? { pvcs: lists.persistentvolumeclaims.map(pvc) }
      : {}),
    ...(lists.events ? { events: lists.events.map(event) } : {}),
    ...(jobs ? { jobs } : {}),
  } as InventoryInput;
}

export const KUBECTL_RESOURCES = [
  'nodes',
  'namespaces',
  'deployments',
  'statefulsets',
  'daemonsets',
  'replicasets',
  'pods',
  'services',
  'ingresses',
  'persistentvolumeclaims',
  'events',
  'jobs',
  'cronjobs',
] as const;

/** Reads the current context's cluster; undefined when nothing could be read. */
export async function readKubectlInventory(identity: {
  agentId: string;
  clusterName: string;
  timestamp: string;
}): Promise<InventoryInput | undefined> {
  const lists: Record<string, K8s[] | undefined> = {};
  await Promise.all(
    KUBECTL_RESOURCES.map(async (resource) => {
      lists[resource] = await list(resource);
    }),
  );
  if (Object.values(lists).every((l) => l === undefined)) return undefined;
  return toInventory(lists, identity);
}
