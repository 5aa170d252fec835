/**
 * `npm run bench -- metrics`: the cluster metrics route over a real
 * VictoriaMetrics holding 200 clusters × 7 days of series at 1-minute
 * resolution (BENCH_METRICS_CLUSTERS, BENCH_METRICS_DAYS to change that).
 *
 * Prints, for one cluster, p50/p99 of each of the ten queries over 24 hours
 * and over 7 days: the store's own time (the same PromQL sent straight to
 * VictoriaMetrics) and the metrics read's (validation, the selector, the
 * store, ranking and shaping); then what writing a large cluster's series
 * after a sync costs.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateInventory } from '../shared/fixtures/generate.ts';
import { writeSnapshotSeries } from '../shared/metrics/after-sync.ts';
import { metricsHttp } from '../shared/metrics/http.ts';
import { parseMetricsRequest } from '../shared/metrics/params.ts';
import { selectorOf } from '../shared/metrics/queries.ts';
import { readClusterMetrics } from '../shared/metrics/read.ts';
import { prometheusStore } from '../shared/metrics/store.ts';
import { spawnVictoriaMetrics } from '../shared/metrics/victoria-metrics.ts';
import { seriesWriter } from '../shared/metrics/writer.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
} from '../test/helpers/api-fixtures.ts';
import { benchDatabase } from './common.ts';

const CLUSTERS = Number(process.env.BENCH_METRICS_CLUSTERS ?? 200);
const DAYS = Number(process.env.BENCH_METRICS_DAYS ?? 7);
const RUNS = Number(process.env.BENCH_METRICS_RUNS ?? 20);
const MINUTE = 60_000;

const say = (line: string) => console.log(line);

function percentile(sorted: number[], p: number): number {
  const index = Math.min(
    sorted.length - 1,
    Math.ceil((p / 100) * sorted.length) - 1,
  );
  return sorted[Math.max(0, index)] ?? Number.NaN;
}

async function timed(runs: number, fn: () => Promise<unknown>) {
  const times: number[] = [];
  await fn(); // warm-up
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

/** One cluster's series, as VictoriaMetrics' JSON-lines import. */
function clusterSeries(
  clusterId: string,
  environmentId: string,
  start: number,
  points: number,
): string {
  const timestamps = Array.from(
    { length: points },
    (_, i) => start + i * MINUTE,
  );
  const ids = { cluster_id: clusterId, environment_id: environmentId };
  const lines: string[] = [];
  const add = (
    name: string,
    labels: Record<string, string>,
    value: (i: number) => number,
  ) => {
    lines.push(
      JSON.stringify({
        metric: { __name__: name, ...ids, ...labels },
        values: timestamps.map((_, i) => value(i)),
        timestamps,
      }),
    );
  };
  for (let n = 0; n < 3; n++) {
    add(
      'node_cpu_usage_ratio',
      { node: `node-${n}` },
      (i) => ((i + n * 7) % 100) / 100,
    );
  }
  for (const namespace of ['shop', 'db']) {
    for (let p = 0; p < 2; p++) {
      const pod = {
        namespace,
        pod: `web-${p}`,
        workload: 'web',
        workload_kind: 'Deployment',
      };
      add('pod_cpu_usage_ratio', pod, (i) => ((i + p) % 50) / 100);
      add('pod_memory_working_set_bytes', pod, (i) => 1e8 + ((i * 4096) % 1e7));
      add('container_restarts_total', { ...pod, container: 'app' }, (i) =>
        Math.floor(i / 500),
      );
    }
    for (const type of ['desired', 'ready']) {
      add(
        'k8s_workload_replicas',
        { namespace, workload: 'web', workload_kind: 'Deployment', type },
        () => 2,
      );
    }
  }
  for (const phase of ['Running', 'Pending']) {
    add('kubelet_pods', { node: 'node-0', phase }, (i) =>
      phase === 'Running' ? 40 + (i % 3) : i % 2,
    );
  }
  return `${lines.join('\n')}\n`;
}

const dir = await mkdtemp(join(tmpdir(), 'bench-vm-'));
const vm = await spawnVictoriaMetrics({ dataDir: join(dir, 'data') });
const database = await benchDatabase('k8s_inventory_bench_metrics');
try {
  const { db } = database;
  const clientId = await insertClient(db, 'acme');
  const environmentId = await insertEnvironment(db, clientId, 'production');
  const clusterIds: string[] = [];
  for (let c = 0; c < CLUSTERS; c++) {
    clusterIds.push(
      await insertCluster(db, {
        clientId,
        environmentId,
        name: `cluster-${c}`,
        status: 'healthy',
      }),
    );
  }

  // Seed ------------------------------------------------------------------
  const points = DAYS * 24 * 60;
  const end = Math.floor(Date.now() / MINUTE) * MINUTE;
  const start = end - (points - 1) * MINUTE;
  const seedStarted = performance.now();
  let series = 0;
  for (const clusterId of clusterIds) {
    const body = clusterSeries(clusterId, environmentId, start, points);
    series += body.split('\n').length - 1;
    const response = await fetch(`${vm.url}/api/v1/import`, {
      method: 'POST',
      body,
    });
    if (!response.ok)
      throw new Error(`import: ${response.status} ${await response.text()}`);
  }
  await vm.flush();
  say(
    `seeded ${CLUSTERS} clusters × ${DAYS} d at 1 min: ${series} series, ${((series * points) / 1e6).toFixed(1)} M samples in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s`,
  );

  // Route vs store --------------------------------------------------------
  const store = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
  const target = clusterIds[0] as string;
  const cluster = { id: target, environment_id: environmentId };
  const filters: Record<string, string> = {
    cpu_by_workload: '&namespace=shop',
    cpu_by_pod: '&namespace=shop&workload=web&workload_kind=Deployment',
    memory_by_pod: '&namespace=shop&workload=web&workload_kind=Deployment',
    restarts_by_workload:
      '&namespace=shop&workload=web&workload_kind=Deployment',
    replicas: '&namespace=shop&workload=web&workload_kind=Deployment',
  };
  say('');
  say(
    'query                  range   store p50/p99 ms   read p50/p99 ms    read − store p50',
  );
  for (const [label, rangeMs] of [
    ['24h', 24 * 3_600_000],
    ['7d', 7 * 24 * 3_600_000 - MINUTE],
  ] as const) {
    for (const name of [
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
    ]) {
      const qs = `start=${new Date(end - rangeMs).toISOString()}&end=${new Date(end).toISOString()}${filters[name] ?? ''}`;
      const request = parseMetricsRequest(name, qs);
      const { query, stepSeconds: step } = request;
      const promql = query.promql(
        selectorOf(query.scope, {
          clusterId: target,
          environmentId,
          namespace: request.namespace,
          workload: request.workload,
          workloadKind: request.workloadKind,
        }),
        step,
      );
      const range = {
        start: Math.ceil((end - rangeMs) / 1000 / step) * step,
        end: end / 1000,
        step,
      };
      // The store's own work: the one query, or the step's average and peak.
      const storeOnly = () =>
        query.perStep || step <= 60
          ? store.queryRange(promql, range)
          : Promise.all(
              ['avg_over_time', 'max_over_time'].map((fn) =>
                store.queryRange(`${fn}((${promql})[${step}s:60s])`, range),
              ),
            );
      const storeTimes = await timed(RUNS, storeOnly);
      const routeTimes = await timed(RUNS, () =>
        readClusterMetrics(store, cluster, parseMetricsRequest(name, qs)),
      );
      say(
        `${name.padEnd(22)} ${label.padEnd(7)} ${`${storeTimes.p50.toFixed(1)} / ${storeTimes.p99.toFixed(1)}`.padEnd(18)} ${`${routeTimes.p50.toFixed(1)} / ${routeTimes.p99.toFixed(1)}`.padEnd(18)} ${(routeTimes.p50 - storeTimes.p50).toFixed(1)}`,
      );
    }
  }

  // Series written after a sync --------------------------------------------
  const inventory = generateInventory({
    size: 'large',
    seed: 'bench-metrics',
    agentId: randomUUID(),
  });
  const writer = seriesWriter({
    url: `${vm.url}/api/v1/write`,
    format: 'remote_write',
    http: metricsHttp(),
    timeoutMs: 2_000,
  });
  const committed = {
    clusterId: randomUUID(),
    environmentId,
    snapshotAt: new Date(),
  };
  const write = await timed(10, async () => {
    committed.snapshotAt = new Date(committed.snapshotAt.getTime() + MINUTE);
    const outcome = await writeSnapshotSeries(writer, inventory, committed);
    if (outcome !== 'written') throw new Error('series write failed');
  });
  say('');
  say(
    `series write after sync, large cluster (${inventory.nodes?.length} nodes, ${inventory.pods?.length} pods): p50 ${write.p50.toFixed(1)} ms, p99 ${write.p99.toFixed(1)} ms`,
  );
} finally {
  await database.close();
  await vm.stop();
  await rm(dir, { recursive: true, force: true });
}
