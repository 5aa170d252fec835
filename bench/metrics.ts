/**
 * `npm run bench -- metrics`: the cluster metrics route over a real
 * VictoriaMetrics holding 200 clusters × 7 days of series at 1-minute
 * resolution (BENCH_METRICS_CLUSTERS, BENCH_METRICS_DAYS to change that).
 *
 * Prints, for one cluster, p50/p99 of each of the ten queries over 24 hours
 * and over 7 days (BENCH_METRICS_RUNS runs, interleaved so each sees the
 * same machine):
 * - store: the store's own time, on exactly the requests the route sent
 *   (recorded from its transport), over the same connections, at once as
 *   the route sends them, each answer read to its end and not parsed;
 * - route: the Lambda handler of get-cluster-metrics (the caller's grants
 *   and the cluster read from PostgreSQL, the query string, the store,
 *   parsing, ranking and shaping, the JSON body);
 * - route − store: what the route adds;
 * - route alone: the route with the store's answers replayed from memory,
 *   so its own work, without the store's noise.
 *
 * Then what writing a large cluster's series costs: on the sync's path
 * (queueing the write: what a record waits for before it returns), and in
 * the background after it (derive, encode, compress, send, and the whole
 * write), each p50/p99.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2WithJWTAuthorizer } from 'aws-lambda';
import snappy from 'snappyjs';
import { handler as metricsHandler } from '../functions/api/get-cluster-metrics.ts';
import { lambdaContext } from '../infra/local/lambda-context.ts';
import { spawnVictoriaMetrics } from '../infra/local/victoria-metrics.ts';
import { setDb } from '../shared/db/process-pool.ts';
import {
  backgroundSeriesWrites,
  writeSnapshotSeries,
} from '../shared/metrics/after-sync.ts';
import { setMetricsStore } from '../shared/metrics/context.ts';
import {
  type MetricsHttp,
  type MetricsHttpRequest,
  type MetricsHttpResponse,
  metricsHttp,
} from '../shared/metrics/http.ts';
import { METRICS_QUERY_NAMES } from '../shared/metrics/queries.ts';
import { encodeWriteRequest } from '../shared/metrics/remote-write.ts';
import { seriesOfSnapshot } from '../shared/metrics/series.ts';
import { prometheusStore } from '../shared/metrics/store.ts';
import { seriesWriter } from '../shared/metrics/writer.ts';
import { generateInventory } from '../test/fixtures/generate.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
} from '../test/helpers/api-fixtures.ts';
import { benchDatabase, percentile } from './common.ts';

const CLUSTERS = Number(process.env.BENCH_METRICS_CLUSTERS ?? 200);
const DAYS = Number(process.env.BENCH_METRICS_DAYS ?? 7);
const RUNS = Number(process.env.BENCH_METRICS_RUNS ?? 50);
/** BENCH_METRICS_WRITES=0 skips the series-write part. */
const WRITES = process.env.BENCH_METRICS_WRITES !== '0';
const MINUTE = 60_000;

const say = (line: string) => console.log(line);

/** p50/p99 of `fn`'s time, or of the ms it returns when it returns a number. */
async function timed(runs: number, fn: () => Promise<unknown> | unknown) {
  const times: number[] = [];
  await fn(); // warm-up
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const measured = await fn();
    times.push(
      typeof measured === 'number' ? measured : performance.now() - started,
    );
  }
  return { p50: percentile(times, 50), p99: percentile(times, 99) };
}

const pair = (t: { p50: number; p99: number }) =>
  `${t.p50.toFixed(1)} / ${t.p99.toFixed(1)}`;

/** The API Gateway event of a GET on the metrics route, claims verified. */
function routeEvent(
  clusterId: string,
  name: string,
  rawQueryString: string,
): APIGatewayProxyEventV2WithJWTAuthorizer {
  return {
    rawQueryString,
    pathParameters: { clusterID: clusterId, query: name },
    requestContext: {
      authorizer: {
        jwt: {
          claims: { sub: 'bench:reader', email: 'reader@bench.test' },
          scopes: [],
        },
      },
    },
  } as unknown as APIGatewayProxyEventV2WithJWTAuthorizer;
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
  // Every store request goes through this transport: it records what a
  // route run sent (so the store's own time is measured on exactly those
  // requests, over the same connections), and can answer them from memory
  // (so the route's own work is measured without the store's noise).
  const http = metricsHttp();
  let recorded:
    | { request: MetricsHttpRequest; response: MetricsHttpResponse }[]
    | undefined;
  let replay: Map<string, MetricsHttpResponse> | undefined;
  const exchangeKey = (request: MetricsHttpRequest) =>
    `${request.url.href} ${String(request.body)}`;
  const transport: MetricsHttp = async (request) => {
    const known = replay?.get(exchangeKey(request));
    if (known) return known;
    const response = await http(request);
    recorded?.push({ request, response });
    return response;
  };
  const store = prometheusStore({ baseUrl: vm.url, http: transport });
  await insertGrant(db, {
    email: 'reader@bench.test',
    role: 'operator',
    clientId,
  });
  setDb(db);
  setMetricsStore(store);
  const context = lambdaContext('get-cluster-metrics');
  const target = clusterIds[0] as string;
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
    `${RUNS} runs of each, interleaved (store, route, route on replayed answers); p50 / p99 ms`,
  );
  say(
    'query                  range   points  store          route          route − store   route alone (store replayed)',
  );
  const overheads: number[] = [];
  const alone: number[] = [];
  for (const [label, rangeMs] of [
    ['24h', 24 * 3_600_000],
    ['7d', 7 * 24 * 3_600_000 - MINUTE],
  ] as const) {
    for (const name of METRICS_QUERY_NAMES) {
      const qs = `start=${new Date(end - rangeMs).toISOString()}&end=${new Date(end).toISOString()}${filters[name] ?? ''}`;
      const event = routeEvent(target, name, qs);
      const route = async () => {
        const result = await metricsHandler(event, context);
        if (result.statusCode !== 200) {
          throw new Error(
            `route answered ${result.statusCode}: ${result.body}`,
          );
        }
        return result;
      };
      // The route's requests to the store, as it sends them (warm-up).
      recorded = [];
      const { body } = await route();
      const exchanges = recorded;
      recorded = undefined;
      const points = (
        JSON.parse(body ?? '{}') as {
          data: { series: { data: unknown[] }[] };
        }
      ).data.series.reduce((n, series) => n + series.data.length, 0);
      // The store's own time: those requests, at once as the route sends
      // them, each answer read to its end; nothing parsed.
      const storeOnly = () =>
        Promise.all(exchanges.map(({ request }) => http(request)));
      const answers = new Map(
        exchanges.map(({ request, response }) => [
          exchangeKey(request),
          response,
        ]),
      );
      const replayed = async () => {
        replay = answers;
        try {
          await route();
        } finally {
          replay = undefined;
        }
      };
      const times = {
        store: [] as number[],
        route: [] as number[],
        alone: [] as number[],
      };
      for (let i = 0; i < RUNS; i++) {
        for (const [kind, fn] of [
          ['store', storeOnly],
          ['route', route],
          ['alone', replayed],
        ] as const) {
          const started = performance.now();
          await fn();
          times[kind].push(performance.now() - started);
        }
      }
      const p = (values: number[]) => ({
        p50: percentile(values, 50),
        p99: percentile(values, 99),
      });
      const [storeTimes, routeTimes, aloneTimes] = [
        p(times.store),
        p(times.route),
        p(times.alone),
      ];
      overheads.push(routeTimes.p50 - storeTimes.p50);
      alone.push(aloneTimes.p50);
      say(
        `${name.padEnd(22)} ${label.padEnd(7)} ${String(points).padEnd(7)} ${pair(storeTimes).padEnd(14)} ${pair(routeTimes).padEnd(14)} ${`${(routeTimes.p50 - storeTimes.p50).toFixed(1)} / ${(routeTimes.p99 - storeTimes.p99).toFixed(1)}`.padEnd(15)} ${pair(aloneTimes)}`,
      );
    }
  }

  say('');
  say(
    `route − store, p50 over the ${overheads.length} rows: median ${percentile(overheads, 50).toFixed(1)} ms, worst ${Math.max(...overheads).toFixed(1)} ms (target ≤ 5 ms); the route alone (store replayed) p50: median ${percentile(alone, 50).toFixed(1)} ms, worst ${Math.max(...alone).toFixed(1)} ms`,
  );
  if (WRITES) await benchSeriesWrites(environmentId);
} finally {
  await database.close();
  await vm.stop();
  await rm(dir, { recursive: true, force: true });
}

// Series written after a sync --------------------------------------------
/** What writing a large cluster's series costs, on and off the sync's path. */
async function benchSeriesWrites(environmentId: string): Promise<void> {
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
  const next = () => {
    committed.snapshotAt = new Date(committed.snapshotAt.getTime() + MINUTE);
    return committed;
  };
  const WRITE_RUNS = 10;
  // On the sync's path: what processRecord awaits before it returns.
  const writes = backgroundSeriesWrites(writer);
  // Each write ends before the next is queued, so each is measured alone.
  const onPath = await timed(WRITE_RUNS, async () => {
    const started = performance.now();
    await writes.enqueue(inventory, { ...next() });
    const queuedMs = performance.now() - started;
    await writes.settled();
    return queuedMs;
  });
  // In the background, step by step.
  let samples = seriesOfSnapshot(inventory, committed);
  const derive = await timed(WRITE_RUNS, () => {
    samples = seriesOfSnapshot(inventory, committed);
  });
  let raw = encodeWriteRequest(samples, committed.snapshotAt.getTime());
  const encode = await timed(WRITE_RUNS, () => {
    raw = encodeWriteRequest(samples, committed.snapshotAt.getTime());
  });
  let body = snappy.compress(raw);
  const compress = await timed(WRITE_RUNS, () => {
    body = snappy.compress(raw);
  });
  const whole = await timed(WRITE_RUNS, async () => {
    const outcome = await writeSnapshotSeries(writer, inventory, next());
    if (outcome !== 'written') throw new Error('series write failed');
  });
  say('');
  say(
    `series write after sync, large cluster (${inventory.nodes?.length} nodes, ${inventory.pods?.length} pods, ${samples.length} series, ${(raw.length / 1e6).toFixed(1)} MB → ${(body.length / 1e3).toFixed(0)} KB snappy), p50 / p99 ms:`,
  );
  say(
    `  on the sync's path (queue the write):  ${pair(onPath)}  (target ≤ 30 ms)`,
  );
  say(
    `  background: derive ${pair(derive)}, encode ${pair(encode)}, compress ${pair(compress)}`,
  );
  say(`  background: the whole write, sent and acknowledged: ${pair(whole)}`);
}
