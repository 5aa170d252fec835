/**
 * GET /api/v1/clusters/{clusterID}/metrics/{query} through the local API
 * server, over a real VictoriaMetrics: access before validation (404, then
 * 403 on metrics:read, assets:read not enough), every refusal naming its
 * parameter, the step table at each edge, instant mode, ranking and the 50
 * cap, infinite points dropped, `series: []`, 503 with no store configured,
 * 502 with a generic body when the store is down, slow or failing, and a
 * selector-injection attempt in every parameter refused before the store is
 * asked.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { getConfig } from '../../../shared/config.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import { metricsHttp } from '../../../shared/metrics/http.ts';
import { METRICS_QUERY_NAMES } from '../../../shared/metrics/queries.ts';
import {
  type MetricsStore,
  prometheusStore,
} from '../../../shared/metrics/store.ts';
import { freePort } from '../../../shared/process/supervise.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  type Sample,
  startVictoriaMetrics,
  type TestVictoriaMetrics,
} from '../../helpers/victoria-metrics.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;
/** Two hours ago, on the hour: every sample's minute 0. */
const T0 = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
const at = (minute: number) => T0 + minute * MINUTE;
const iso = (time: number) => new Date(time).toISOString();
/** start and end as minutes after T0. */
const range = (from: number, to: number) =>
  `start=${iso(at(from))}&end=${iso(at(to))}`;
const WORKLOAD = '&namespace=shop&workload=web&workload_kind=Deployment';

/** An HTTP server that accepts connections and never answers. */
function startSilentServer(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(() => {});
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** A store answering 500 with a body that must not reach the caller. */
function startFailingServer(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer((_req, res) => {
      res.writeHead(500).end('internal: tenant 42 at 10.0.0.7 exploded');
    });
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

const urlOf = (server: Server) =>
  `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

describe('GET /api/v1/clusters/{id}/metrics/{query}', () => {
  let database: TestDatabase;
  let api: TestApi;
  let vm: TestVictoriaMetrics;
  let silent: Server;
  let failing: Server;
  /** The real store, counting what it is asked. */
  let asked = 0;
  let store: MetricsStore;
  let clusterPath: string;
  let emptyPath: string;
  let stagingPath: string;
  const tokens: Record<string, string> = {};

  const get = (path: string, who = 'operator') => api.get(path, tokens[who]);

  beforeAll(async () => {
    database = await createTestDatabase();
    vm = await startVictoriaMetrics();
    silent = await startSilentServer();
    failing = await startFailingServer();
    const real = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
    store = {
      queryRange: (...args) => {
        asked++;
        return real.queryRange(...args);
      },
      queryInstant: (...args) => {
        asked++;
        return real.queryInstant(...args);
      },
    };
    const db = database.db;
    const acme = await insertClient(db, 'acme-metrics');
    const production = await insertEnvironment(db, acme, 'production');
    const staging = await insertEnvironment(db, acme, 'staging');
    const globex = await insertClient(db, 'globex-metrics');
    const globexProduction = await insertEnvironment(db, globex, 'production');
    const clusterId = await insertCluster(db, {
      clientId: acme,
      environmentId: production,
      name: 'prod-a',
    });
    const emptyId = await insertCluster(db, {
      clientId: acme,
      environmentId: production,
      name: 'prod-empty',
    });
    const stagingId = await insertCluster(db, {
      clientId: acme,
      environmentId: staging,
      name: 'staging-a',
    });
    clusterPath = `/api/v1/clusters/${clusterId}/metrics`;
    emptyPath = `/api/v1/clusters/${emptyId}/metrics`;
    stagingPath = `/api/v1/clusters/${stagingId}/metrics`;
    const grants = {
      operator: { role: 'operator', clientId: acme },
      'env-operator': {
        role: 'operator',
        clientId: acme,
        environmentId: production,
      },
      'staging-operator': {
        role: 'operator',
        clientId: acme,
        environmentId: staging,
      },
      viewer: { role: 'viewer', clientId: acme },
      'globex-operator': {
        role: 'operator',
        clientId: globex,
        environmentId: globexProduction,
      },
    } as const;
    for (const [who, grant] of Object.entries(grants)) {
      const email = `${who}@example.test`;
      await insertGrant(db, { email, ...grant });
    }
    api = await startTestApi(database);
    for (const who of Object.keys(grants)) {
      tokens[who] = await api.token(`${who}@example.test`);
    }

    const labels = { cluster_id: clusterId, environment_id: production };
    const samples: Sample[] = [];
    // 60 nodes, node k at k for minutes 0..10: the top 50 are 11..60.
    for (let k = 1; k <= 60; k++) {
      for (let minute = 0; minute <= 10; minute++) {
        samples.push({
          name: 'node_cpu_usage_ratio',
          labels: { ...labels, node: `node-${String(k).padStart(2, '0')}` },
          value: k,
          time: at(minute),
        });
      }
    }
    // Running is +Inf at minute 2, Failed only -Inf: gaps, no Failed series.
    for (const [minute, phase, value] of [
      [1, 'Running', 4],
      [2, 'Running', Number.POSITIVE_INFINITY],
      [3, 'Running', 5],
      [2, 'Failed', Number.NEGATIVE_INFINITY],
    ] as const) {
      samples.push({
        name: 'kubelet_pods',
        labels: { ...labels, phase },
        value,
        time: at(minute),
      });
    }
    for (const namespace of ['shop', 'db']) {
      samples.push({
        name: 'pod_cpu_usage_ratio',
        labels: {
          ...labels,
          namespace,
          pod: 'web-1',
          workload: 'web',
          workload_kind: 'Deployment',
        },
        value: namespace === 'shop' ? 0.5 : 0.25,
        time: at(10),
      });
    }
    // The same workload in the staging cluster: never read from prod-a.
    samples.push({
      name: 'k8s_workload_replicas',
      labels: {
        cluster_id: stagingId,
        environment_id: staging,
        namespace: 'shop',
        workload: 'web',
        workload_kind: 'Deployment',
        type: 'desired',
      },
      value: 9,
      time: at(5),
    });
    // 30 days of memory every 5 minutes at 1, peaking at 2 once on days 3,
    // 15 and 27: across the chunks a long range is read in.
    for (let t = at(0) - 30 * DAY; t <= at(0); t += 5 * MINUTE) {
      const peak = [3, 15, 27].some((d) => t === at(0) - d * DAY);
      samples.push({
        name: 'pod_memory_working_set_bytes',
        labels: { ...labels, namespace: 'long', pod: 'p' },
        value: peak ? 2 : 1,
        time: t,
      });
    }
    await vm.importSamples(samples);
    setMetricsStore(store);
  });

  afterEach(() => {
    setMetricsStore(store);
  });

  afterAll(async () => {
    setMetricsStore('reset');
    silent?.closeAllConnections();
    silent?.close();
    failing?.close();
    await api?.close();
    await vm?.stop();
    await database?.drop();
  });

  describe('access, before any validation', () => {
    it('answers 404 to a caller outside the cluster, whatever the parameters', async () => {
      // Act
      const outsiders = await Promise.all([
        get(`${clusterPath}/cpu_by_node?${range(0, 10)}`, 'staging-operator'),
        get(`${clusterPath}/no_such_query?bogus=1`, 'staging-operator'),
        get(`${clusterPath}/cpu_by_node?start=yesterday`, 'globex-operator'),
      ]);
      const unknown = await get(
        `/api/v1/clusters/00000000-0000-4000-8000-000000000000/metrics/cpu_by_node?bogus=1`,
      );
      const malformed = await get(
        `/api/v1/clusters/not-a-uuid/metrics/cpu_by_node?${range(0, 10)}`,
      );

      // Assess
      for (const response of [...outsiders, unknown, malformed]) {
        expect(response.status, JSON.stringify(response.body)).toBe(404);
        expect(response.body.error.code).toBe('not_found');
      }
    });

    it('answers 403 to a caller holding assets:read but not metrics:read, before any 400', async () => {
      // Act
      const responses = await Promise.all([
        get(`${clusterPath}/cpu_by_node?${range(0, 10)}`, 'viewer'),
        get(`${clusterPath}/no_such_query?${range(0, 10)}`, 'viewer'),
        get(`${clusterPath}/cpu_by_node?bogus=1&start=x`, 'viewer'),
        get(`${stagingPath}/cpu_by_node?${range(0, 10)}`, 'env-operator'),
      ]);

      // Assess: the last caller's grant is on production only.
      expect(responses.map((r) => r.status)).toEqual([403, 403, 403, 404]);
      for (const response of responses.slice(0, 3)) {
        expect(response.body.error.code).toBe('forbidden');
      }
    });

    it('serves an environment-scoped metrics:read grant', async () => {
      // Act
      const response = await get(
        `${clusterPath}/cpu_by_node?${range(0, 10)}`,
        'env-operator',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data.series).toHaveLength(50);
    });
  });

  describe('refusals', () => {
    const cases: [string, string, string, string][] = [
      ['an unknown query name', 'cpu_by_everything', range(0, 10), 'query'],
      ['an unknown parameter', 'cpu_by_node', `${range(0, 10)}&step=1`, 'step'],
      [
        'a repeated parameter',
        'cpu_by_node',
        `${range(0, 10)}&start=${iso(at(0))}`,
        'start',
      ],
      ['a missing start', 'cpu_by_node', `end=${iso(at(10))}`, 'start'],
      ['a missing end', 'cpu_by_node', `start=${iso(at(0))}`, 'end'],
      [
        'a start that is no RFC 3339 time',
        'cpu_by_node',
        `start=yesterday&end=${iso(at(10))}`,
        'start',
      ],
      [
        'an end that is no RFC 3339 time',
        'cpu_by_node',
        `start=${iso(at(0))}&end=1700000000`,
        'end',
      ],
      ['a start after end', 'cpu_by_node', range(10, 0), 'start'],
      ['a start equal to end', 'cpu_by_node', range(5, 5), 'start'],
      [
        'a range over 30 days',
        'cpu_by_node',
        `start=${iso(at(0) - 30 * DAY - 1000)}&end=${iso(at(0))}`,
        'start',
      ],
      [
        'namespace on a cluster-wide query',
        'cpu_by_node',
        `${range(0, 10)}&namespace=shop`,
        'namespace',
      ],
      [
        'workload on cpu_by_workload',
        'cpu_by_workload',
        `${range(0, 10)}&namespace=shop&workload=web`,
        'workload',
      ],
      [
        'workload_kind on cpu_by_namespace',
        'cpu_by_namespace',
        `${range(0, 10)}&workload_kind=Deployment`,
        'workload_kind',
      ],
      [
        'workload on a cluster-wide query',
        'restarts',
        `${range(0, 10)}&workload=web`,
        'workload',
      ],
      [
        'a missing namespace on cpu_by_workload',
        'cpu_by_workload',
        range(0, 10),
        'namespace',
      ],
      [
        'a missing workload on cpu_by_pod',
        'cpu_by_pod',
        `${range(0, 10)}&namespace=shop&workload_kind=Deployment`,
        'workload',
      ],
      [
        'a missing workload_kind on replicas',
        'replicas',
        `${range(0, 10)}&namespace=shop&workload=web`,
        'workload_kind',
      ],
      [
        'a namespace that is no DNS-1123 label',
        'cpu_by_workload',
        `${range(0, 10)}&namespace=Shop_1`,
        'namespace',
      ],
      [
        'a workload that is no DNS-1123 subdomain',
        'memory_by_pod',
        `${range(0, 10)}&namespace=shop&workload=-web&workload_kind=Deployment`,
        'workload',
      ],
      [
        'a workload over 253 characters',
        'memory_by_pod',
        `${range(0, 10)}&namespace=shop&workload=${'a'.repeat(254)}&workload_kind=Deployment`,
        'workload',
      ],
      [
        'a workload_kind that does not start upper-case',
        'restarts_by_workload',
        `${range(0, 10)}&namespace=shop&workload=web&workload_kind=deployment`,
        'workload_kind',
      ],
      [
        'a workload_kind over 63 characters',
        'restarts_by_workload',
        `${range(0, 10)}&namespace=shop&workload=web&workload_kind=D${'a'.repeat(63)}`,
        'workload_kind',
      ],
      [
        'instant on a query that does not take it',
        'cpu_by_node',
        `${range(0, 10)}&instant=true`,
        'instant',
      ],
      [
        'instant other than true or false',
        'cpu_by_namespace',
        `${range(0, 10)}&instant=yes`,
        'instant',
      ],
    ];
    for (const [label, name, qs, param] of cases) {
      it(`refuses ${label} with a 400 naming ${param}, without asking the store`, async () => {
        // Prepare
        const before = asked;

        // Act
        const response = await get(`${clusterPath}/${name}?${qs}`);

        // Assess
        expect(response.status, JSON.stringify(response.body)).toBe(400);
        expect(response.body.error.code).toBe('bad_request');
        expect(response.body.error.details.param).toBe(param);
        expect(response.body.error.message).toContain(param);
        expect(asked).toBe(before);
      });
    }

    it('lists the ten query names when the name is unknown', async () => {
      // Act
      const response = await get(`${clusterPath}/cpu?${range(0, 10)}`);

      // Assess
      expect(response.body.error.details.allowed).toEqual([
        ...METRICS_QUERY_NAMES,
      ]);
      expect(METRICS_QUERY_NAMES).toHaveLength(10);
    });
  });

  describe('answers', () => {
    it('picks the step from the range, each edge inclusive', async () => {
      // Prepare: range length → step.
      const edges: [number, number][] = [
        [6 * HOUR, 60],
        [6 * HOUR + 1000, 300],
        [DAY, 300],
        [DAY + 1000, 900],
        [7 * DAY, 900],
        [7 * DAY + 1000, 3600],
        [30 * DAY, 3600],
      ];
      const end = at(10);

      // Act
      const steps = [];
      for (const [length] of edges) {
        const response = await get(
          `${emptyPath}/cpu_by_node?start=${iso(end - length)}&end=${iso(end)}`,
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        steps.push(response.body.data.step_seconds);
      }

      // Assess
      expect(steps).toEqual(edges.map(([, step]) => step));
    });

    it('ranks the series by peak, keeps 50 and says it truncated', async () => {
      // Act
      const response = await get(`${clusterPath}/cpu_by_node?${range(0, 10)}`);

      // Assess
      expect(response.status).toBe(200);
      const { series, truncated, step_seconds } = response.body.data;
      expect(truncated).toBe(true);
      expect(step_seconds).toBe(60);
      expect(series).toHaveLength(50);
      expect(
        series.map((s: { labels: { node: string } }) => s.labels.node),
      ).toEqual(
        Array.from(
          { length: 50 },
          (_, i) => `node-${String(60 - i).padStart(2, '0')}`,
        ),
      );
      expect(series[0]).toEqual({
        labels_key: '{node="node-60"}',
        labels: { node: 'node-60' },
        data: Array.from({ length: 11 }, (_, m) => ({
          time: iso(at(m)),
          avg_value: 60,
        })),
      });
    });

    it('drops infinite points as gaps and a series of nothing else', async () => {
      // Act
      const response = await get(`${clusterPath}/pods_by_phase?${range(1, 3)}`);

      // Assess
      expect(response.body.data).toEqual({
        series: [
          {
            labels_key: '{phase="Running"}',
            labels: { phase: 'Running' },
            data: [
              { time: iso(at(1)), avg_value: 4 },
              { time: iso(at(3)), avg_value: 5 },
            ],
          },
        ],
        truncated: false,
        step_seconds: 60,
      });
    });

    it('carries the average and the peak of a step over several samples', async () => {
      // Act: 7 hours, so 5-minute steps over the 1-minute samples.
      const response = await get(
        `${clusterPath}/cpu_by_node?start=${iso(at(10) - 7 * HOUR)}&end=${iso(at(10))}`,
      );

      // Assess
      expect(response.body.data.step_seconds).toBe(300);
      for (const point of response.body.data.series[0].data) {
        expect(point).toEqual({
          time: expect.any(String),
          avg_value: 60,
          max_value: 60,
        });
      }
    });

    it('reads 30 days in chunks the store accepts, each point once and in order', async () => {
      // Act
      const response = await get(
        `${clusterPath}/memory_by_namespace?start=${iso(at(0) - 30 * DAY)}&end=${iso(at(0))}`,
      );

      // Assess
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data.step_seconds).toBe(3600);
      const long = response.body.data.series.find(
        (s: { labels: { namespace: string } }) => s.labels.namespace === 'long',
      );
      const times = long.data.map((p: { time: string }) => Date.parse(p.time));
      expect(times.length).toBeGreaterThanOrEqual(30 * 24 - 1);
      for (let i = 1; i < times.length; i++) {
        expect(times[i] - times[i - 1]).toBe(HOUR);
      }
      const peaks = long.data.filter(
        (p: { max_value: number }) => p.max_value === 2,
      );
      expect(peaks.length).toBeGreaterThanOrEqual(3);
      // Each peak in a step beside its sample, which may sit on either side
      // of a midnight: counted by how many days before the end it is.
      const daysBack = peaks.map((p: { time: string }) =>
        Math.round((at(0) - Date.parse(p.time)) / DAY),
      );
      expect(new Set(daysBack)).toEqual(new Set([3, 15, 27]));
    });

    it('answers one point per namespace at end in instant mode, step 0', async () => {
      // Act
      const response = await get(
        `${clusterPath}/cpu_by_namespace?${range(0, 10)}&instant=true`,
      );

      // Assess
      expect(response.body.data).toEqual({
        series: [
          {
            labels_key: '{namespace="shop"}',
            labels: { namespace: 'shop' },
            data: [{ time: iso(at(10)), avg_value: 0.5 }],
          },
          {
            labels_key: '{namespace="db"}',
            labels: { namespace: 'db' },
            data: [{ time: iso(at(10)), avg_value: 0.25 }],
          },
        ],
        truncated: false,
        step_seconds: 0,
      });
    });

    it('answers series [] for a cluster without series, and for another cluster’s workload', async () => {
      // Act
      const empty = await get(`${emptyPath}/restarts?${range(0, 10)}`);
      const replicas = await get(
        `${clusterPath}/replicas?${range(0, 10)}${WORKLOAD}`,
      );

      // Assess
      for (const response of [empty, replicas]) {
        expect(response.status).toBe(200);
        expect(response.body.data).toEqual({
          series: [],
          truncated: false,
          step_seconds: 60,
        });
      }
    });

    it('answers series [] for a window holding no step, without asking the store', async () => {
      // Prepare: every node has a sample at minutes 0 and 1; the window
      // runs from 10 s to 50 s past minute 0, so no 1-minute step falls in it.
      const before = asked;

      // Act
      const response = await get(
        `${clusterPath}/cpu_by_node?start=${iso(at(0) + 10_000)}&end=${iso(at(0) + 50_000)}`,
      );

      // Assess
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      expect(response.body.data).toEqual({
        series: [],
        truncated: false,
        step_seconds: 60,
      });
      expect(asked).toBe(before);
    });
  });

  describe('the store', () => {
    it('answers 503 when no store is configured', async () => {
      // Prepare: back to the configuration, which names none here.
      expect(getConfig().METRICS_URL).toBeUndefined();
      setMetricsStore('reset');

      // Act
      const response = await get(`${clusterPath}/cpu_by_node?${range(0, 10)}`);

      // Assess
      expect(response.status).toBe(503);
      expect(response.body.error.code).toBe('metrics_not_configured');
    });

    it('checks access and parameters before answering 503', async () => {
      // Prepare
      setMetricsStore(undefined);

      // Act
      const forbidden = await get(`${clusterPath}/cpu_by_node`, 'viewer');
      const bad = await get(`${clusterPath}/cpu_by_node?start=x`);

      // Assess
      expect(forbidden.status).toBe(403);
      expect(bad.status).toBe(400);
    });

    it('answers 502 with a generic body when the store is down, failing or slow', async () => {
      // Prepare: nothing listens on a free port (fetch refuses port 9).
      const stores = {
        down: prometheusStore({
          baseUrl: `http://127.0.0.1:${await freePort()}`,
          http: metricsHttp(),
        }),
        failing: prometheusStore({
          baseUrl: urlOf(failing),
          http: metricsHttp(),
        }),
        slow: prometheusStore({
          baseUrl: urlOf(silent),
          http: metricsHttp(),
          timeoutMs: 300,
        }),
      };

      for (const [label, broken] of Object.entries(stores)) {
        setMetricsStore(broken);
        const started = performance.now();

        // Act
        const response = await get(
          `${clusterPath}/cpu_by_node?${range(0, 10)}`,
        );

        // Assess
        expect(response.status, label).toBe(502);
        expect(response.body, label).toEqual({
          error: { code: 'bad_gateway', message: 'bad gateway' },
        });
        if (label === 'slow') {
          expect(performance.now() - started).toBeGreaterThanOrEqual(300);
        }
      }
    });

    it('gives up on the store after 10 s by default', () => {
      // Assess: the deadline the configured store is built with.
      expect(getConfig().METRICS_QUERY_TIMEOUT_MS).toBe(10_000);
    });
  });

  describe('selector injection', () => {
    const HOSTILE = '"} or vector(1) or up{a="';
    const hostile = encodeURIComponent(HOSTILE);
    const cases: [string, string, string][] = [
      ['query', `cpu_by_node${hostile}`, range(0, 10)],
      ['start', 'cpu_by_node', `start=${hostile}&end=${iso(at(10))}`],
      ['end', 'cpu_by_node', `start=${iso(at(0))}&end=${hostile}`],
      ['namespace', 'cpu_by_workload', `${range(0, 10)}&namespace=${hostile}`],
      [
        'workload',
        'cpu_by_pod',
        `${range(0, 10)}&namespace=shop&workload=web${hostile}&workload_kind=Deployment`,
      ],
      [
        'workload_kind',
        'replicas',
        `${range(0, 10)}&namespace=shop&workload=web&workload_kind=Deployment${hostile}`,
      ],
      ['instant', 'cpu_by_namespace', `${range(0, 10)}&instant=true${hostile}`],
    ];
    for (const [param, name, qs] of cases) {
      it(`a ${param} that tries to close its selector is refused before the store is asked`, async () => {
        // Prepare
        const before = asked;

        // Act
        const response = await get(`${clusterPath}/${name}?${qs}`);

        // Assess
        expect(response.status, JSON.stringify(response.body)).toBe(400);
        expect(response.body.error.details.param).toBe(param);
        expect(asked).toBe(before);
      });
    }

    it('a cluster id that tries to close its selector is a 404', async () => {
      // Act
      const response = await get(
        `/api/v1/clusters/${hostile}/metrics/cpu_by_node?${range(0, 10)}`,
      );

      // Assess
      expect(response.status).toBe(404);
    });
  });
});
