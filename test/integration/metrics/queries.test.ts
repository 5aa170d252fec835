/**
 * The ten allow-listed queries against a real VictoriaMetrics: samples are
 * imported for the cluster, for another cluster and for the same cluster id
 * in another environment (neither may leak in), and each query's series are
 * computed here by hand.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { metricsHttp } from '../../../shared/metrics/http.ts';
import { parseMetricsRequest } from '../../../shared/metrics/params.ts';
import { selectorOf } from '../../../shared/metrics/queries.ts';
import {
  type MetricsData,
  readClusterMetrics,
} from '../../../shared/metrics/read.ts';
import {
  type MetricsStore,
  prometheusStore,
} from '../../../shared/metrics/store.ts';
import {
  type Sample,
  startVictoriaMetrics,
  type TestVictoriaMetrics,
} from '../../helpers/victoria-metrics.ts';

const CLUSTER = {
  id: '6d2f4c1e-8a3b-4d5e-9f60-7a8b9c0d1e2f',
  environment_id: '0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9',
};
const OTHER_CLUSTER = {
  id: 'f1e2d3c4-b5a6-4978-8695-a4b3c2d1e0f9',
  environment_id: CLUSTER.environment_id,
};
const OTHER_ENVIRONMENT = '9a8b7c6d-5e4f-4321-8765-43210fedcba9';

const MINUTE = 60_000;
/** Two hours ago, on the hour: every sample's minute 0. */
const T0 = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 2 * 3_600_000;
const at = (minute: number) => T0 + minute * MINUTE;
const iso = (minute: number) => new Date(at(minute)).toISOString();

/** One sample a minute for minutes 0..59 of `value(minute)`. */
function everyMinute(
  name: string,
  labels: Record<string, string>,
  value: (minute: number) => number | undefined,
  cluster: { id: string; environment_id: string } = CLUSTER,
): Sample[] {
  const samples: Sample[] = [];
  for (let minute = 0; minute < 60; minute++) {
    const v = value(minute);
    if (v === undefined) continue;
    samples.push({
      name,
      labels: {
        cluster_id: cluster.id,
        environment_id: cluster.environment_id,
        ...labels,
      },
      value: v,
      time: at(minute),
    });
  }
  return samples;
}

/** The same series for the other cluster and for another environment. */
function withDecoys(
  name: string,
  labels: Record<string, string>,
  value: (minute: number) => number | undefined,
): Sample[] {
  return [
    ...everyMinute(name, labels, value),
    ...everyMinute(name, labels, (m) => (value(m) ?? 0) * 100, OTHER_CLUSTER),
    ...everyMinute(name, labels, (m) => (value(m) ?? 0) * 1000, {
      id: CLUSTER.id,
      environment_id: OTHER_ENVIRONMENT,
    }),
  ];
}

const workloadLabels = (
  namespace: string,
  pod: string,
  workload?: string,
  kind?: string,
) => ({
  namespace,
  pod,
  ...(workload ? { workload } : {}),
  ...(kind ? { workload_kind: kind } : {}),
});

/** The query string of a request over minutes [from, to]. */
function range(from: number, to: number, extra = ''): string {
  return `start=${iso(from)}&end=${iso(to)}${extra}`;
}

/** Each series as labels → the avg_value of every point. */
function valuesOf(data: MetricsData): Record<string, number[]> {
  return Object.fromEntries(
    data.series.map((s) => [s.labels_key, s.data.map((p) => p.avg_value)]),
  );
}

describe('cluster metrics queries', () => {
  let vm: TestVictoriaMetrics;
  let store: MetricsStore;

  const run = (query: string, qs: string) =>
    readClusterMetrics(store, CLUSTER, parseMetricsRequest(query, qs));

  beforeAll(async () => {
    vm = await startVictoriaMetrics();
    store = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
    await vm.importSamples([
      // cpu_by_node: n1 reported twice (two node agents), n2 cycles 0..0.4.
      ...withDecoys(
        'node_cpu_usage_ratio',
        { node: 'n1', host_id: 'h1' },
        () => 0.25,
      ),
      ...withDecoys(
        'node_cpu_usage_ratio',
        { node: 'n1', host_id: 'h2' },
        () => 0.75,
      ),
      ...withDecoys(
        'node_cpu_usage_ratio',
        { node: 'n2' },
        (m) => (m % 5) / 10,
      ),
      // memory and cpu per pod.
      ...withDecoys(
        'pod_memory_working_set_bytes',
        workloadLabels('shop', 'web-a', 'web', 'Deployment'),
        () => 100,
      ),
      ...withDecoys(
        'pod_memory_working_set_bytes',
        workloadLabels('shop', 'web-b', 'web', 'Deployment'),
        () => 200,
      ),
      ...withDecoys(
        'pod_memory_working_set_bytes',
        workloadLabels('shop', 'web-0', 'web', 'StatefulSet'),
        () => 400,
      ),
      ...withDecoys(
        'pod_memory_working_set_bytes',
        workloadLabels('db', 'pg-0', 'pg', 'StatefulSet'),
        () => 1000,
      ),
      ...withDecoys(
        'pod_cpu_usage_ratio',
        workloadLabels('shop', 'web-a', 'web', 'Deployment'),
        () => 0.125,
      ),
      ...withDecoys(
        'pod_cpu_usage_ratio',
        workloadLabels('shop', 'web-b', 'web', 'Deployment'),
        () => 0.25,
      ),
      ...withDecoys(
        'pod_cpu_usage_ratio',
        workloadLabels('shop', 'web-0', 'web', 'StatefulSet'),
        () => 0.5,
      ),
      // An older node agent's pod: no workload labels.
      ...withDecoys(
        'pod_cpu_usage_ratio',
        workloadLabels('shop', 'stray'),
        () => 2,
      ),
      ...withDecoys(
        'pod_cpu_usage_ratio',
        workloadLabels('db', 'pg-0', 'pg', 'StatefulSet'),
        () => 1,
      ),
      // pods_by_phase: two nodes' kubelets.
      ...withDecoys('kubelet_pods', { phase: 'Running', node: 'n1' }, () => 3),
      ...withDecoys('kubelet_pods', { phase: 'Running', node: 'n2' }, () => 2),
      ...withDecoys('kubelet_pods', { phase: 'Pending', node: 'n2' }, () => 1),
      // replicas: the backend's (no host_id) and a node agent's own.
      ...withDecoys(
        'k8s_workload_replicas',
        { ...workloadLabels('shop', '', 'web', 'Deployment'), type: 'desired' },
        () => 3,
      ),
      ...withDecoys(
        'k8s_workload_replicas',
        { ...workloadLabels('shop', '', 'web', 'Deployment'), type: 'ready' },
        (m) => (m < 30 ? 2 : 3),
      ),
      ...withDecoys(
        'k8s_workload_replicas',
        {
          ...workloadLabels('shop', '', 'web', 'Deployment'),
          type: 'desired',
          host_id: 'h1',
        },
        () => 99,
      ),
      ...withDecoys(
        'k8s_workload_replicas',
        {
          ...workloadLabels('shop', '', 'web', 'StatefulSet'),
          type: 'desired',
        },
        () => 7,
      ),
      // restarts: a steps up by 2 at minute 10 and by 3 at minute 20.
      ...withDecoys(
        'container_restarts_total',
        {
          ...workloadLabels('shop', 'web-a', 'web', 'Deployment'),
          container: 'app',
        },
        (m) => (m < 10 ? 0 : m < 20 ? 2 : 5),
      ),
      // b is new at minute 15 with 10 restarts already: it adds nothing.
      ...withDecoys(
        'container_restarts_total',
        {
          ...workloadLabels('shop', 'web-b', 'web', 'Deployment'),
          container: 'app',
        },
        (m) => (m < 15 ? undefined : 10),
      ),
      // c goes silent for minutes 13..15 (shorter than W = 5m), then is up by 3.
      ...withDecoys(
        'container_restarts_total',
        {
          ...workloadLabels('db', 'pg-0', 'pg', 'StatefulSet'),
          container: 'pg',
        },
        (m) => (m < 13 ? 1 : m < 16 ? undefined : 4),
      ),
    ]);
  });

  afterAll(async () => {
    await vm?.stop();
  });

  it('cpu_by_node takes the highest report of each node, ranked by peak', async () => {
    // Act
    const data = await run('cpu_by_node', range(5, 9));
    // Assess
    expect(data.step_seconds).toBe(60);
    expect(data.truncated).toBe(false);
    expect(data.series.map((s) => s.labels)).toEqual([
      { node: 'n1' },
      { node: 'n2' },
    ]);
    expect(valuesOf(data)).toEqual({
      '{node="n1"}': [0.75, 0.75, 0.75, 0.75, 0.75],
      '{node="n2"}': [0, 0.1, 0.2, 0.3, 0.4],
    });
    expect(data.series[0]?.data[0]).toEqual({ time: iso(5), avg_value: 0.75 });
  });

  it('memory_by_namespace sums the pods of each namespace', async () => {
    const data = await run('memory_by_namespace', range(30, 32));
    expect(valuesOf(data)).toEqual({
      '{namespace="db"}': [1000, 1000, 1000],
      '{namespace="shop"}': [700, 700, 700],
    });
  });

  it('pods_by_phase sums every node of the cluster', async () => {
    const data = await run('pods_by_phase', range(30, 31));
    expect(valuesOf(data)).toEqual({
      '{phase="Running"}': [5, 5],
      '{phase="Pending"}': [1, 1],
    });
  });

  it('cpu_by_workload keeps the kinds apart and leaves out pods without workload labels', async () => {
    const data = await run('cpu_by_workload', range(29, 30, '&namespace=shop'));
    expect(valuesOf(data)).toEqual({
      '{workload="web",workload_kind="StatefulSet"}': [0.5, 0.5],
      '{workload="web",workload_kind="Deployment"}': [0.375, 0.375],
    });
  });

  it('cpu_by_namespace counts every pod, with or without workload labels', async () => {
    const data = await run('cpu_by_namespace', range(30, 31));
    expect(valuesOf(data)).toEqual({
      '{namespace="shop"}': [2.875, 2.875],
      '{namespace="db"}': [1, 1],
    });
  });

  it('cpu_by_pod and memory_by_pod read one workload of one kind', async () => {
    const filter = '&namespace=shop&workload=web&workload_kind=Deployment';
    const cpu = await run('cpu_by_pod', range(30, 31, filter));
    const memory = await run('memory_by_pod', range(30, 31, filter));
    expect(valuesOf(cpu)).toEqual({
      '{pod="web-b"}': [0.25, 0.25],
      '{pod="web-a"}': [0.125, 0.125],
    });
    expect(valuesOf(memory)).toEqual({
      '{pod="web-b"}': [200, 200],
      '{pod="web-a"}': [100, 100],
    });
  });

  it('replicas reads only the series written without a host_id', async () => {
    const data = await run(
      'replicas',
      range(29, 30, '&namespace=shop&workload=web&workload_kind=Deployment'),
    );
    expect(valuesOf(data)).toEqual({
      '{type="desired"}': [3, 3],
      '{type="ready"}': [2, 3],
    });
  });

  it('restarts is a per-step difference: a new series adds nothing, a short gap is bridged', async () => {
    // Act
    const data = await run('restarts', range(5, 30));
    // Assess: a +2 at minute 10, c's +3 across its gap at 16, a's +3 at 20.
    const expected = Array.from({ length: 26 }, (_, i) => {
      const minute = 5 + i;
      return minute === 10 ? 2 : minute === 16 || minute === 20 ? 3 : 0;
    });
    expect(valuesOf(data)).toEqual({ '{}': expected });
  });

  it('restarts_by_workload counts only the workload asked for', async () => {
    const data = await run(
      'restarts_by_workload',
      range(5, 30, '&namespace=shop&workload=web&workload_kind=Deployment'),
    );
    const expected = Array.from({ length: 26 }, (_, i) => {
      const minute = 5 + i;
      return minute === 10 ? 2 : minute === 20 ? 3 : 0;
    });
    expect(valuesOf(data)).toEqual({ '{}': expected });
  });

  it('a step over several samples carries their average and their peak', async () => {
    // Prepare: 6h + 1 s is past the 1-minute row of the step table.
    const start = new Date(at(30) - 6 * 3_600_000 - 1000).toISOString();
    // Act
    const data = await run('cpu_by_node', `start=${start}&end=${iso(30)}`);
    // Assess: n2 cycles 0, 0.1 .. 0.4 within every 5-minute step.
    expect(data.step_seconds).toBe(300);
    const n2 = data.series.find((s) => s.labels.node === 'n2');
    const inside = n2?.data.filter((p) => p.time > iso(0) && p.time <= iso(30));
    expect(inside?.map((p) => p.time)).toEqual(
      [5, 10, 15, 20, 25, 30].map(iso),
    );
    for (const point of inside ?? []) {
      expect(point.avg_value).toBeCloseTo(0.2, 10);
      expect(point.max_value).toBeCloseTo(0.4, 10);
    }
  });

  it('instant mode answers one point per namespace at end, step 0', async () => {
    const data = await run(
      'memory_by_namespace',
      `${range(0, 30)}&instant=true`,
    );
    expect(data.step_seconds).toBe(0);
    expect(data.series).toEqual([
      {
        labels_key: '{namespace="db"}',
        labels: { namespace: 'db' },
        data: [{ time: iso(30), avg_value: 1000 }],
      },
      {
        labels_key: '{namespace="shop"}',
        labels: { namespace: 'shop' },
        data: [{ time: iso(30), avg_value: 700 }],
      },
    ]);
  });

  it('a cluster with no series answers an empty list', async () => {
    const data = await readClusterMetrics(
      store,
      {
        id: '00000000-0000-4000-8000-000000000000',
        environment_id: CLUSTER.environment_id,
      },
      parseMetricsRequest('cpu_by_node', range(0, 30)),
    );
    expect(data).toEqual({ series: [], truncated: false, step_seconds: 60 });
  });
});

describe('cluster metrics ranking and caps', () => {
  let vm: TestVictoriaMetrics;
  let store: MetricsStore;
  const cluster = {
    id: '11111111-2222-4333-8444-555555555555',
    environment_id: CLUSTER.environment_id,
  };

  beforeAll(async () => {
    vm = await startVictoriaMetrics();
    store = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
    const samples: Sample[] = [];
    const labels = {
      cluster_id: cluster.id,
      environment_id: cluster.environment_id,
    };
    // 60 nodes; node k peaks at k once, at minute k % 10.
    for (let k = 1; k <= 60; k++) {
      for (let minute = 0; minute <= 10; minute++) {
        samples.push({
          name: 'node_cpu_usage_ratio',
          labels: { ...labels, node: `node-${String(k).padStart(2, '0')}` },
          value: minute === k % 10 ? k : 0.5,
          time: at(minute),
        });
      }
    }
    // 5,001 namespaces for the instant cap; namespace i uses i bytes.
    for (let i = 1; i <= 5001; i++) {
      samples.push({
        name: 'pod_memory_working_set_bytes',
        labels: { ...labels, namespace: `ns-${i}`, pod: 'p' },
        value: i,
        time: at(10),
      });
    }
    // Infinite points are gaps; a series of nothing else is no series.
    samples.push(
      {
        name: 'kubelet_pods',
        labels: { ...labels, phase: 'Running' },
        value: 4,
        time: at(1),
      },
      {
        name: 'kubelet_pods',
        labels: { ...labels, phase: 'Running' },
        value: Number.POSITIVE_INFINITY,
        time: at(2),
      },
      {
        name: 'kubelet_pods',
        labels: { ...labels, phase: 'Running' },
        value: 5,
        time: at(3),
      },
      {
        name: 'kubelet_pods',
        labels: { ...labels, phase: 'Failed' },
        value: Number.NEGATIVE_INFINITY,
        time: at(2),
      },
    );
    await vm.importSamples(samples);
  });

  afterAll(async () => {
    await vm?.stop();
  });

  it('ranks series by their peak and keeps the top 50, saying it truncated', async () => {
    const data = await readClusterMetrics(
      store,
      cluster,
      parseMetricsRequest('cpu_by_node', range(0, 10)),
    );
    expect(data.truncated).toBe(true);
    expect(data.series).toHaveLength(50);
    expect(data.series.map((s) => s.labels.node)).toEqual(
      Array.from(
        { length: 50 },
        (_, i) => `node-${String(60 - i).padStart(2, '0')}`,
      ),
    );
  });

  it('caps instant mode at 5,000 series, the largest first', async () => {
    const data = await readClusterMetrics(
      store,
      cluster,
      parseMetricsRequest(
        'memory_by_namespace',
        `${range(0, 10)}&instant=true`,
      ),
    );
    expect(data.truncated).toBe(true);
    expect(data.series).toHaveLength(5000);
    expect(data.series[0]?.labels).toEqual({ namespace: 'ns-5001' });
    expect(data.series.at(-1)?.labels).toEqual({ namespace: 'ns-2' });
  });

  it('drops infinite points as gaps', async () => {
    // Act: minute 2 is +Inf for Running; Failed has only -Inf.
    const data = await readClusterMetrics(
      store,
      cluster,
      parseMetricsRequest('pods_by_phase', range(1, 3)),
    );
    // Assess: minute 2 would otherwise be +Inf (VictoriaMetrics keeps it).
    expect(data.series).toEqual([
      {
        labels_key: '{phase="Running"}',
        labels: { phase: 'Running' },
        data: [
          { time: iso(1), avg_value: 4 },
          { time: iso(3), avg_value: 5 },
        ],
      },
    ]);
  });
});

describe('cluster metrics selectors', () => {
  let vm: TestVictoriaMetrics;
  let store: MetricsStore;
  const HOSTILE = [
    'shop"} or vector(1) or up{a="',
    'shop\\"}',
    'shop\n',
    'sh.*',
    "shop'",
    'shop\u2028x',
  ];

  beforeAll(async () => {
    vm = await startVictoriaMetrics();
    store = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
    const samples: Sample[] = [];
    // One series per hostile value in each label, plus a plain one.
    for (const [i, value] of ['shop', ...HOSTILE].entries()) {
      for (const label of [
        'cluster_id',
        'environment_id',
        'namespace',
        'workload',
        'workload_kind',
      ]) {
        const labels: Record<string, string> = {
          cluster_id: 'c',
          environment_id: 'e',
          namespace: 'shop',
          workload: 'shop',
          workload_kind: 'shop',
          pod: `pod-${label}-${i}`,
        };
        labels[label] = value;
        samples.push({
          name: 'pod_cpu_usage_ratio',
          labels,
          value: 1,
          time: at(10),
        });
      }
    }
    await vm.importSamples(samples);
  });

  afterAll(async () => {
    await vm?.stop();
  });

  for (const label of [
    'cluster_id',
    'environment_id',
    'namespace',
    'workload',
    'workload_kind',
  ] as const) {
    it(`a value of ${label} that tries to close its selector matches only itself`, async () => {
      for (const [i, value] of HOSTILE.entries()) {
        // Prepare: every value plain except the one under test.
        const values = {
          clusterId: 'c',
          environmentId: 'e',
          namespace: 'shop',
          workload: 'shop',
          workloadKind: 'shop',
        };
        const key = {
          cluster_id: 'clusterId',
          environment_id: 'environmentId',
          namespace: 'namespace',
          workload: 'workload',
          workload_kind: 'workloadKind',
        }[label] as keyof typeof values;
        values[key] = value;
        // Act
        const found = await store.queryInstant(
          `sum by (pod) (pod_cpu_usage_ratio{${selectorOf('workload', values)}})`,
          Math.floor(at(10) / 1000),
        );
        // Assess
        expect(found.map((s) => s.labels)).toEqual([
          { pod: `pod-${label}-${i + 1}` },
        ]);
      }
    });
  }
});
