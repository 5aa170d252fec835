/**
 * The series the backend derives from one committed snapshot, at the
 * snapshot's time, each stamped with the cluster's `cluster_id` and
 * `environment_id` and never a `host_id` (which every node agent's point
 * carries: the `replicas` query reads only series without one).
 *
 * | series                         | labels                                                 | from                                   |
 * |--------------------------------|--------------------------------------------------------|----------------------------------------|
 * | k8s_workload_replicas          | namespace, workload, workload_kind, type=desired/ready | workloads[].replicas_desired / _ready  |
 * | node_cpu_usage_ratio           | node                                                   | nodes[].usage.cpu ÷ capacity.cpu        |
 * | pod_cpu_usage_ratio            | namespace, pod, workload, workload_kind                | pods[].usage.cpu_millicores ÷ 1000     |
 * | pod_memory_working_set_bytes   | namespace, pod, workload, workload_kind                | pods[].usage.memory_bytes              |
 * | kubelet_pods                   | node, phase                                            | the count of pods per node and phase   |
 * | container_restarts_total       | namespace, pod, container, workload, workload_kind     | pods[].containers[].restart_count      |
 *
 * A figure the snapshot does not carry (no usage from metrics-server, an
 * unknown replica count) is no sample, never a 0. An empty label value is
 * left out: Prometheus treats it as absent, so `workload!=""` leaves out a
 * pod with no known controller. The resolution is the sync interval; finer
 * series with the same names and labels serve the same queries.
 */

type Maybe<T> = T | null | undefined;
interface Amounts {
  cpu_millicores?: Maybe<number>;
  memory_bytes?: Maybe<number>;
}

/**
 * What the series read of a snapshot's rows: each row either as the wire
 * schema outputs it or as sent, when the schema accepted those very bytes
 * before (an unchanged row: not validated again, and not normalized). A
 * field the schema defaults may then be absent or null as well as its
 * default (`[]`, null), and every figure read here treats the three alike.
 */
export interface SnapshotRows {
  workloads?: Maybe<
    readonly {
      namespace: string;
      name: string;
      kind: string;
      replicas_desired?: Maybe<number>;
      replicas_ready?: Maybe<number>;
    }[]
  >;
  nodes?: Maybe<
    readonly {
      name: string;
      usage?: Maybe<Amounts>;
      capacity?: Maybe<Amounts>;
      allocatable?: Maybe<Amounts>;
    }[]
  >;
  pods?: Maybe<
    readonly {
      namespace: string;
      name: string;
      workload_name?: Maybe<string>;
      workload_kind?: Maybe<string>;
      usage?: Maybe<Amounts>;
      containers?: Maybe<
        readonly { name: string; restart_count?: Maybe<number> }[]
      >;
      node_name?: Maybe<string>;
      phase?: Maybe<string>;
    }[]
  >;
}

export interface SeriesSample {
  name: string;
  /** Without `__name__`; empty values already left out. */
  labels: Record<string, string>;
  value: number;
}

export interface SeriesStamp {
  clusterId: string;
  environmentId: string;
}

/**
 * The stamp's labels plus `names[i] = values[i]` for each value that is
 * set. Built by assignment, not by spreading or walking entries: a large
 * cluster derives some 16,000 samples per sync.
 */
function labelsOf(
  stamp: SeriesStamp,
  names: readonly string[],
  values: readonly (string | null | undefined)[],
): Record<string, string> {
  const labels: Record<string, string> = {
    cluster_id: stamp.clusterId,
    environment_id: stamp.environmentId,
  };
  for (let i = 0; i < names.length; i++) {
    const value = values[i];
    if (value) labels[names[i] as string] = value;
  }
  return labels;
}

const WORKLOAD_LABELS = ['namespace', 'workload', 'workload_kind', 'type'];
const NODE_LABELS = ['node'];
const POD_LABELS = ['namespace', 'pod', 'workload', 'workload_kind'];
const CONTAINER_LABELS = [...POD_LABELS, 'container'];
const PHASE_LABELS = ['node', 'phase'];

/** Every series sample of `inventory` (kinds not collected add none). */
export function seriesOfSnapshot(
  inventory: SnapshotRows,
  stamp: SeriesStamp,
): SeriesSample[] {
  const samples: SeriesSample[] = [];
  const push = (
    name: string,
    names: readonly string[],
    values: readonly (string | null | undefined)[],
    value: number | null | undefined,
  ) => {
    if (value === null || value === undefined || !Number.isFinite(value)) {
      return;
    }
    samples.push({ name, labels: labelsOf(stamp, names, values), value });
  };

  for (const workload of inventory.workloads ?? []) {
    const { namespace, name, kind } = workload;
    push(
      'k8s_workload_replicas',
      WORKLOAD_LABELS,
      [namespace, name, kind, 'desired'],
      workload.replicas_desired,
    );
    push(
      'k8s_workload_replicas',
      WORKLOAD_LABELS,
      [namespace, name, kind, 'ready'],
      workload.replicas_ready,
    );
  }

  for (const node of inventory.nodes ?? []) {
    const used = node.usage?.cpu_millicores;
    const total =
      node.capacity?.cpu_millicores ?? node.allocatable?.cpu_millicores;
    if (used !== null && used !== undefined && total) {
      push('node_cpu_usage_ratio', NODE_LABELS, [node.name], used / total);
    }
  }

  const phases = new Map<
    string,
    { node: string; phase: string; count: number }
  >();
  for (const pod of inventory.pods ?? []) {
    const owner = [
      pod.namespace,
      pod.name,
      pod.workload_name,
      pod.workload_kind,
    ];
    const usage = pod.usage;
    const cpu = usage?.cpu_millicores;
    push(
      'pod_cpu_usage_ratio',
      POD_LABELS,
      owner,
      cpu === null || cpu === undefined ? cpu : cpu / 1000,
    );
    push(
      'pod_memory_working_set_bytes',
      POD_LABELS,
      owner,
      usage?.memory_bytes,
    );
    for (const container of pod.containers ?? []) {
      push(
        'container_restarts_total',
        CONTAINER_LABELS,
        [...owner, container.name],
        container.restart_count,
      );
    }
    const node = pod.node_name ?? '';
    const phase = pod.phase ?? 'Unknown';
    const key = `${node}\n${phase}`;
    const entry = phases.get(key);
    if (entry) entry.count++;
    else phases.set(key, { node, phase, count: 1 });
  }
  for (const { node, phase, count } of phases.values()) {
    push('kubelet_pods', PHASE_LABELS, [node, phase], count);
  }
  return samples;
}
