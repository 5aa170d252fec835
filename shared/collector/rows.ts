/**
 * One wire row per API object, for the 13 kinds (wire-contract.md, Rows).
 * Each builder reads the object as the apiserver serves it; amounts become
 * integers (millicores, bytes), annotations pass the secret detector, event
 * messages the sanitizer. Free text Kubernetes does not validate (messages,
 * reasons, images, owner references, annotation values, a CRD's strings) is
 * made storable (k8s.ts, storableText), so no string the backend refuses is
 * sent. Every row is built with the same key order, so an unchanged cluster
 * serializes to the same bytes.
 */

import { sanitizeMessage } from '../sanitize/secrets.ts';
import type {
  Amounts,
  Condition,
  EndpointSliceRow,
  EventRow,
  HpaRow,
  IngressRow,
  JobRow,
  NamespaceRow,
  NetworkPolicyRow,
  NodeRow,
  PodContainer,
  PodRow,
  PvcRow,
  ResourceQuotaRow,
  ServiceRow,
  WorkloadRow,
} from '../wire/inventory.ts';
import { LIMITS } from '../wire/inventory.ts';
import { safeAnnotations } from './annotations.ts';
import {
  array,
  bool,
  controllerOf,
  count,
  cut,
  freeText,
  type K8sObject,
  nonEmpty,
  nonEmptyFreeText,
  storableText,
  str,
  stringMap,
  strings,
} from './k8s.ts';
import { cpuMillicores, quantityBytes, quantityCount } from './quantity.ts';
import { workloadSpecFacts } from './spec-facts.ts';

function common(o: K8sObject) {
  return {
    name: String(o.metadata.name),
    uid: str(o.metadata.uid),
    labels: stringMap(o.metadata.labels),
    created_at: str(o.metadata.creationTimestamp),
  };
}

function namespaced(o: K8sObject) {
  return { namespace: String(o.metadata.namespace), ...common(o) };
}

/** A row's annotations: safe to send (annotations.ts), and storable. */
function rowAnnotations(o: K8sObject): Record<string, string> {
  const annotations = safeAnnotations(o.metadata.annotations);
  for (const [key, value] of Object.entries(annotations)) {
    annotations[key] = storableText(value);
  }
  return annotations;
}

export function conditions(list: unknown): Condition[] {
  return array(list)
    .filter((c) => nonEmpty(c?.type) !== null)
    .map((c) => ({
      type: storableText(String(c.type)),
      status: freeText(c.status),
      reason: freeText(c.reason),
      message: cut(str(c.message), LIMITS.message),
      last_transition_time: str(c.lastTransitionTime) ?? str(c.lastUpdateTime),
    }));
}

export function amounts(resources: K8sObject): Amounts {
  return {
    cpu_millicores: cpuMillicores(resources?.cpu),
    memory_bytes: quantityBytes(resources?.memory),
  };
}

/** IPs or hostnames of a `status.loadBalancer.ingress`. */
const loadBalancer = (ingress: unknown): string[] =>
  array(ingress)
    .map((i) => nonEmpty(i?.ip) ?? nonEmpty(i?.hostname))
    .filter((v): v is string => v !== null);

// ------------------------------------------------------------------ nodes

const ROLE_PREFIX = 'node-role.kubernetes.io/';

export function nodeRow(
  o: K8sObject,
  usage: Amounts | null,
  podCount: number | null,
): NodeRow {
  const labels = stringMap(o.metadata.labels);
  const status = o.status ?? {};
  const ready = array(status.conditions).find((c) => c?.type === 'Ready');
  const info = status.nodeInfo ?? {};
  const resources = (r: K8sObject) => ({
    ...amounts(r),
    pods: count(quantityCount(r?.pods)),
  });
  return {
    ...common(o),
    roles: Object.keys(labels)
      .filter((k) => k.startsWith(ROLE_PREFIX) && k.length > ROLE_PREFIX.length)
      .map((k) => k.slice(ROLE_PREFIX.length))
      .sort(),
    taints: array(o.spec?.taints)
      .filter((t) => nonEmpty(t?.key) !== null)
      .map((t) => ({
        key: String(t.key),
        value: str(t.value),
        effect: str(t.effect),
      })),
    status:
      ready === undefined
        ? 'Unknown'
        : ready.status === 'True'
          ? 'Ready'
          : ready.status === 'False'
            ? 'NotReady'
            : 'Unknown',
    conditions: conditions(status.conditions),
    unschedulable: o.spec?.unschedulable === true,
    kubelet_version: freeText(info.kubeletVersion),
    container_runtime: freeText(info.containerRuntimeVersion),
    os_image: freeText(info.osImage),
    kernel_version: freeText(info.kernelVersion),
    capacity: resources(status.capacity),
    allocatable: resources(status.allocatable),
    usage,
    addresses: array(status.addresses)
      .filter(
        (a) => nonEmpty(a?.type) !== null && nonEmpty(a?.address) !== null,
      )
      .map((a) => ({
        type: storableText(String(a.type)),
        address: storableText(String(a.address)),
      })),
    provider_id: nonEmptyFreeText(o.spec?.providerID),
    instance_type:
      labels['node.kubernetes.io/instance-type'] ??
      labels['beta.kubernetes.io/instance-type'] ??
      null,
    zone:
      labels['topology.kubernetes.io/zone'] ??
      labels['failure-domain.beta.kubernetes.io/zone'] ??
      null,
    pod_count: podCount,
  };
}

export function namespaceRow(
  o: K8sObject,
  counts: { workloads: number; pods: number; services: number } | undefined,
): NamespaceRow {
  return {
    ...common(o),
    status: freeText(o.status?.phase),
    workload_count: counts?.workloads ?? null,
    pod_count: counts?.pods ?? null,
    service_count: counts?.services ?? null,
  };
}

// -------------------------------------------------------------- workloads

/** `helm.sh/chart: nginx-1.2.3` → name `nginx`, version `1.2.3`. */
function helmChart(chart: string | undefined): [string | null, string | null] {
  if (chart === undefined) return [null, null];
  const match = /^(.+?)-(v?\d[\w.+-]*)$/.exec(chart);
  return match ? [match[1] ?? null, match[2] ?? null] : [chart, null];
}

export function workloadRow(o: K8sObject): WorkloadRow {
  const kind = String(o.kind);
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const podSpec = spec.template?.spec;
  const labels = stringMap(o.metadata.labels);
  const annotations = rowAnnotations(o);
  const [chart, chartVersion] = helmChart(labels['helm.sh/chart']);
  const isDaemonSet = kind === 'DaemonSet';
  let strategy: string | null;
  if (kind === 'Rollout') {
    strategy = spec.strategy?.canary
      ? 'canary'
      : spec.strategy?.blueGreen
        ? 'blueGreen'
        : null;
  } else {
    strategy = str(spec.strategy?.type) ?? str(spec.updateStrategy?.type);
  }
  return {
    ...namespaced(o),
    kind,
    replicas_desired: isDaemonSet
      ? count(status.desiredNumberScheduled)
      : (count(spec.replicas) ?? (kind === 'Rollout' ? 1 : null)),
    replicas_ready: count(
      isDaemonSet ? status.numberReady : (status.readyReplicas ?? 0),
    ),
    replicas_available: count(
      isDaemonSet ? status.numberAvailable : (status.availableReplicas ?? 0),
    ),
    conditions: conditions(status.conditions),
    strategy,
    // A Rollout's pod template is a CRD's: Kubernetes validates none of it.
    service_account:
      nonEmptyFreeText(podSpec?.serviceAccountName) ??
      nonEmptyFreeText(podSpec?.serviceAccount),
    containers: array(podSpec?.containers).map((c) => ({
      name: storableText(String(c?.name)),
      image: freeText(c?.image),
      ports: array(c?.ports).map((p) => ({
        name: freeText(p?.name),
        container_port: count(p?.containerPort),
        protocol: freeText(p?.protocol),
      })),
      requests: amounts(c?.resources?.requests),
      limits: amounts(c?.resources?.limits),
    })),
    annotations,
    helm_release:
      annotations['meta.helm.sh/release-name'] ??
      (labels['app.kubernetes.io/managed-by'] === 'Helm'
        ? (labels['app.kubernetes.io/instance'] ?? null)
        : null),
    helm_chart: chart,
    helm_chart_version: chartVersion,
    spec_facts: workloadSpecFacts(o) ?? null,
  };
}

// ------------------------------------------------------------------- pods

export interface OwnerChain {
  /** The top controller of a pod: Deployment, Rollout, CronJob, ... */
  top(pod: K8sObject): { kind: string; name: string } | undefined;
}

/**
 * Follows owner references upwards through the ReplicaSets and Jobs the
 * agent listed: Pod → ReplicaSet → Deployment or Rollout, Pod → Job →
 * CronJob. An owner that was not listed is the top as far as is known.
 */
export function ownerChain(intermediates: Iterable<K8sObject>): OwnerChain {
  const owners = new Map<string, K8sObject>();
  for (const o of intermediates) {
    const owner = controllerOf(o);
    if (owner?.kind && owner?.name) {
      owners.set(`${o.kind}/${o.metadata.namespace}/${o.metadata.name}`, owner);
    }
  }
  return {
    top(pod) {
      let current = controllerOf(pod);
      if (!current?.kind || !current?.name) return undefined;
      for (let depth = 0; depth < 8; depth += 1) {
        const next = owners.get(
          `${current.kind}/${pod.metadata.namespace}/${current.name}`,
        );
        if (next === undefined) break;
        current = next;
      }
      // Owner references' kind and name are not validated beyond non-empty.
      return {
        kind: storableText(String(current.kind)),
        name: storableText(String(current.name)),
      };
    },
  };
}

function containerState(state: K8sObject): string | null {
  if (state?.running) return 'running';
  if (state?.waiting) return 'waiting';
  if (state?.terminated) return 'terminated';
  return null;
}

export function podRow(
  o: K8sObject,
  chain: OwnerChain,
  usage: Amounts | null,
): PodRow {
  const status = o.status ?? {};
  const statuses = new Map<string, K8sObject>();
  for (const s of [
    ...array(status.initContainerStatuses),
    ...array(status.containerStatuses),
  ]) {
    if (typeof s?.name === 'string') statuses.set(s.name, s);
  }
  const container = (c: K8sObject, init: boolean): PodContainer => {
    const s = statuses.get(String(c?.name));
    return {
      name: String(c?.name),
      // An image is only checked for surrounding spaces.
      image: freeText(c?.image),
      init,
      ready: bool(s?.ready),
      restart_count: count(s?.restartCount),
      state: containerState(s?.state),
      waiting_reason: freeText(s?.state?.waiting?.reason),
      last_termination_reason:
        freeText(s?.lastState?.terminated?.reason) ??
        freeText(s?.state?.terminated?.reason),
      requests: amounts(c?.resources?.requests),
      limits: amounts(c?.resources?.limits),
    };
  };
  const initSpecs = array(o.spec?.initContainers);
  const containers = [
    ...initSpecs.map((c) => container(c, true)),
    ...array(o.spec?.containers).map((c) => container(c, false)),
  ];
  // The READY column counts main containers and native sidecars (init
  // containers that keep running), as kubectl does.
  const sidecars = new Set(
    initSpecs
      .filter((c) => c?.restartPolicy === 'Always')
      .map((c) => String(c.name)),
  );
  const counted = containers.filter((c) => !c.init || sidecars.has(c.name));
  const owner = controllerOf(o);
  const top = chain.top(o);
  const phase = freeText(status.phase);
  return {
    ...namespaced(o),
    usage,
    phase,
    node_name: nonEmpty(o.spec?.nodeName),
    pod_ip: nonEmpty(status.podIP),
    host_ip: nonEmpty(status.hostIP),
    qos_class: freeText(status.qosClass),
    owner_kind: freeText(owner?.kind),
    owner_name: freeText(owner?.name),
    workload_kind: top?.kind ?? null,
    workload_name: top?.name ?? null,
    containers,
    restart_count: containers.reduce((n, c) => n + (c.restart_count ?? 0), 0),
    ready_containers: counted.filter((c) => c.ready === true).length,
    total_containers: counted.length,
    started_at: str(status.startTime),
    pending_since:
      phase === 'Pending' ? str(o.metadata.creationTimestamp) : null,
  };
}

// ------------------------------------------------------ services, network

export function serviceRow(
  o: K8sObject,
  endpointCount: number | null,
): ServiceRow {
  const spec = o.spec ?? {};
  return {
    ...namespaced(o),
    type: str(spec.type),
    cluster_ip: nonEmpty(spec.clusterIP),
    cluster_ips: strings(spec.clusterIPs),
    external_ips: strings(spec.externalIPs),
    load_balancer_ingress: loadBalancer(o.status?.loadBalancer?.ingress),
    ports: array(spec.ports).map((p) => ({
      name: nonEmpty(p?.name),
      protocol: str(p?.protocol),
      port: count(p?.port),
      target_port:
        typeof p?.targetPort === 'number' || typeof p?.targetPort === 'string'
          ? p.targetPort
          : null,
      node_port: count(p?.nodePort),
    })),
    selector: stringMap(spec.selector),
    endpoint_count: endpointCount,
    annotations: rowAnnotations(o),
  };
}

/** An Ingress backend: its service and port (a number, else a name). */
function backend(b: K8sObject | undefined) {
  return {
    service: str(b?.service?.name),
    port: count(b?.service?.port?.number) ?? nonEmpty(b?.service?.port?.name),
  };
}

export function ingressRow(o: K8sObject): IngressRow {
  const spec = o.spec ?? {};
  const annotations = rowAnnotations(o);
  return {
    ...namespaced(o),
    ingress_class:
      nonEmpty(spec.ingressClassName) ??
      annotations['kubernetes.io/ingress.class'] ??
      null,
    rules: array(spec.rules).map((r) => ({
      host: nonEmpty(r?.host),
      paths: array(r?.http?.paths).map((p) => ({
        // An ImplementationSpecific path need only start with `/`.
        path: freeText(p?.path),
        path_type: str(p?.pathType),
        ...backend(p?.backend),
      })),
    })),
    // v1.1: where a request no rule matches goes. A resource backend (a
    // bucket, say) is sent with no service, as a rule path's is.
    default_backend:
      spec.defaultBackend == null ? null : backend(spec.defaultBackend),
    tls: array(spec.tls).map((t) => ({
      hosts: strings(t?.hosts),
      secret_name: nonEmptyFreeText(t?.secretName),
    })),
    load_balancer: loadBalancer(o.status?.loadBalancer?.ingress),
    annotations,
  };
}

export function pvcRow(o: K8sObject): PvcRow {
  const spec = o.spec ?? {};
  return {
    ...namespaced(o),
    phase: freeText(o.status?.phase),
    storage_class: nonEmpty(spec.storageClassName),
    capacity_bytes: quantityBytes(o.status?.capacity?.storage),
    requested_bytes: quantityBytes(spec.resources?.requests?.storage),
    access_modes: strings(spec.accessModes),
    volume_name: nonEmptyFreeText(spec.volumeName),
    volume_mode: str(spec.volumeMode),
    annotations: rowAnnotations(o),
  };
}

export function networkPolicyRow(o: K8sObject): NetworkPolicyRow {
  const spec = o.spec ?? {};
  const rule = (r: K8sObject, peers: 'from' | 'to') => {
    const out: Record<string, unknown> = {};
    if (Array.isArray(r?.[peers])) out[peers] = r[peers];
    if (Array.isArray(r?.ports)) out.ports = r.ports;
    return out;
  };
  return {
    ...namespaced(o),
    pod_selector:
      typeof spec.podSelector === 'object' && spec.podSelector !== null
        ? spec.podSelector
        : {},
    policy_types: strings(spec.policyTypes),
    ingress: array(spec.ingress).map((r) => rule(r, 'from')),
    egress: array(spec.egress).map((r) => rule(r, 'to')),
    annotations: rowAnnotations(o),
  };
}

export function resourceQuotaRow(o: K8sObject): ResourceQuotaRow {
  return {
    ...namespaced(o),
    hard: stringMap(o.status?.hard ?? o.spec?.hard),
    used: stringMap(o.status?.used),
    scopes: strings(o.spec?.scopes),
  };
}

export function endpointSliceRow(o: K8sObject): EndpointSliceRow {
  return {
    ...namespaced(o),
    service_name:
      stringMap(o.metadata.labels)['kubernetes.io/service-name'] ?? null,
    address_type: str(o.addressType),
    endpoints: array(o.endpoints).map((e) => ({
      addresses: strings(e?.addresses),
      ready: bool(e?.conditions?.ready),
      serving: bool(e?.conditions?.serving),
      terminating: bool(e?.conditions?.terminating),
      node_name: nonEmpty(e?.nodeName),
      target_ref: e?.targetRef
        ? {
            kind: freeText(e.targetRef.kind),
            name: freeText(e.targetRef.name),
          }
        : null,
    })),
    ports: array(o.ports).map((p) => ({
      name: nonEmpty(p?.name),
      protocol: str(p?.protocol),
      port: count(p?.port),
    })),
  };
}

// ----------------------------------------------------------------- events

/** The namespace an event is about (either API shape), for exclusion. */
export function eventSubjectNamespace(o: K8sObject): string | null {
  return nonEmpty((o.involvedObject ?? o.regarding)?.namespace);
}

/**
 * An event of either shape: core/v1 (`involvedObject`, `message`, `count`,
 * `lastTimestamp`) or events.k8s.io/v1 (`regarding`, `note`, `deprecated*`).
 * last_seen falls back lastTimestamp → series.lastObservedTime → eventTime
 * → firstTimestamp; count is the series count, the legacy count, else 1.
 */
export function eventRow(o: K8sObject): EventRow {
  const modern = o.regarding !== undefined || o.note !== undefined;
  const subject = modern ? o.regarding : o.involvedObject;
  const first = str(modern ? o.deprecatedFirstTimestamp : o.firstTimestamp);
  const last = str(modern ? o.deprecatedLastTimestamp : o.lastTimestamp);
  const legacyCount = count(modern ? o.deprecatedCount : o.count);
  const source = modern ? o.deprecatedSource : o.source;
  const message = str(modern ? o.note : o.message);
  return {
    ...namespaced(o),
    // A core/v1 Event's type, reason, message, subject and source are
    // not validated: anyone who may create an Event writes what they like.
    type: freeText(o.type),
    reason: freeText(o.reason),
    message:
      message === null
        ? null
        : cut(sanitizeMessage(storableText(message)), LIMITS.message),
    involved_object: subject
      ? {
          kind: freeText(subject.kind),
          name: freeText(subject.name),
          namespace: nonEmptyFreeText(subject.namespace),
          uid: freeText(subject.uid),
        }
      : null,
    count:
      count(o.series?.count) ??
      (legacyCount !== null && legacyCount > 0 ? legacyCount : 1),
    first_seen: first ?? str(o.eventTime),
    last_seen:
      last ?? str(o.series?.lastObservedTime) ?? str(o.eventTime) ?? first,
    source_component: nonEmptyFreeText(source?.component),
    reporting_controller:
      nonEmptyFreeText(o.reportingController) ??
      nonEmptyFreeText(o.reportingComponent),
  };
}

// ------------------------------------------------------------------- jobs

export function jobRow(o: K8sObject): JobRow {
  const isCron = o.kind === 'CronJob';
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const template = isCron ? spec.jobTemplate?.spec?.template : spec.template;
  const done = array(status.conditions).find(
    (c) =>
      (c?.type === 'Complete' || c?.type === 'Failed') && c?.status === 'True',
  );
  const owner = array(o.metadata.ownerReferences).find(
    (r) => r?.kind === 'CronJob',
  );
  let state: string;
  if (isCron) state = spec.suspend === true ? 'Suspended' : 'Scheduled';
  else if (done) state = String(done.type);
  else state = spec.suspend === true ? 'Suspended' : 'Running';
  return {
    ...namespaced(o),
    kind: isCron ? 'CronJob' : 'Job',
    schedule: isCron ? freeText(spec.schedule) : null,
    suspend: bool(spec.suspend),
    active: isCron ? array(status.active).length : count(status.active),
    succeeded: isCron ? null : count(status.succeeded),
    failed: isCron ? null : count(status.failed),
    completions: isCron ? null : count(spec.completions),
    parallelism: isCron ? null : count(spec.parallelism),
    start_time: str(status.startTime),
    completion_time: str(status.completionTime),
    last_schedule_time: isCron ? str(status.lastScheduleTime) : null,
    status: state,
    owner_cronjob: freeText(owner?.name),
    containers: array(template?.spec?.containers).map((c) => ({
      name: String(c?.name),
      image: freeText(c?.image),
    })),
    annotations: rowAnnotations(o),
  };
}

// ------------------------------------------------------------------- hpas

function metricTarget(target: K8sObject): string | null {
  if (!target) return null;
  if (typeof target.averageUtilization === 'number') {
    return `${target.averageUtilization}%`;
  }
  return nonEmpty(target.averageValue) ?? nonEmpty(target.value);
}

/** The metric's source block and its name, for any metric type. */
function metricSource(m: K8sObject): { name: string | null; block: K8sObject } {
  switch (m?.type) {
    case 'Resource':
      return { name: str(m.resource?.name), block: m.resource };
    case 'ContainerResource':
      return {
        name: str(m.containerResource?.name),
        block: m.containerResource,
      };
    // Custom and external metric names are only path-segment names.
    case 'Pods':
      return { name: freeText(m.pods?.metric?.name), block: m.pods };
    case 'Object':
      return { name: freeText(m.object?.metric?.name), block: m.object };
    case 'External':
      return { name: freeText(m.external?.metric?.name), block: m.external };
    default:
      return { name: null, block: undefined };
  }
}

export function hpaRow(o: K8sObject): HpaRow {
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const current = array(status.currentMetrics);
  return {
    ...namespaced(o),
    // scaleTargetRef's kind and name are only path-segment names.
    target: {
      kind: freeText(spec.scaleTargetRef?.kind),
      name: freeText(spec.scaleTargetRef?.name),
      api_version: freeText(spec.scaleTargetRef?.apiVersion),
    },
    min_replicas: count(spec.minReplicas) ?? 1,
    max_replicas: count(spec.maxReplicas),
    current_replicas: count(status.currentReplicas),
    desired_replicas: count(status.desiredReplicas),
    metrics: array(spec.metrics).map((m) => {
      const { name, block } = metricSource(m);
      const observed = current.find(
        (c) => c?.type === m?.type && metricSource(c).name === name,
      );
      return {
        type: str(m?.type),
        name,
        target: metricTarget(block?.target),
        current: observed
          ? metricTarget(metricSource(observed).block?.current)
          : null,
      };
    }),
    conditions: conditions(status.conditions),
  };
}
