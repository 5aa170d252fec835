/**
 * The series a committed sync writes, read back through the metrics queries
 * and through the metrics route from a real VictoriaMetrics, and a sync that succeeds while the store is
 * down or slow.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOne } from '../../../shared/db/pool.ts';
import {
  processBatch,
  processRecord,
  type SyncDeps,
} from '../../../shared/ingest/process-record.ts';
import { seriesWrites } from '../../../shared/metrics/after-sync.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import { seriesWriterFromConfig } from '../../../shared/metrics/from-config.ts';
import { metricsHttp } from '../../../shared/metrics/http.ts';
import { parseMetricsRequest } from '../../../shared/metrics/params.ts';
import {
  type MetricsData,
  readClusterMetrics,
} from '../../../shared/metrics/read.ts';
import {
  type MetricsStore,
  prometheusStore,
} from '../../../shared/metrics/store.ts';
import type { SeriesWriteFormat } from '../../../shared/metrics/writer.ts';
import type { InventoryInput } from '../../../shared/wire/inventory.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { sqsRecordOf } from '../../helpers/sqs-record.ts';
import {
  startVictoriaMetrics,
  type TestVictoriaMetrics,
} from '../../helpers/victoria-metrics.ts';

const recordOf = (subject: string, inventory: InventoryInput) =>
  sqsRecordOf(subject, JSON.stringify(inventory));

const container = (name: string, restarts: number) => ({
  name,
  image: 'registry.example/app:1',
  restart_count: restarts,
});

/** Two nodes, one Deployment at 2 of 3 ready, four pods. */
function inventoryAt(agentId: string, time: Date): InventoryInput {
  const node = (name: string, used: number) => ({
    name,
    capacity: { cpu_millicores: 4000, memory_bytes: 8e9, pods: 110 },
    allocatable: { cpu_millicores: 3800, memory_bytes: 7e9, pods: 110 },
    usage: { cpu_millicores: used, memory_bytes: 1e9 },
  });
  const pod = (name: string, phase: string, nodeName: string | null) => ({
    namespace: 'shop',
    name,
    phase,
    node_name: nodeName,
    // metrics-server has no figure for a pod that is not running.
    usage:
      phase === 'Running'
        ? { cpu_millicores: 250, memory_bytes: 100_000_000 }
        : null,
    workload_kind: 'Deployment',
    workload_name: 'web',
    containers: [container('app', 1)],
  });
  return {
    type: 'kubernetes',
    schema_version: 1,
    agent_id: agentId,
    timestamp: time.toISOString(),
    cluster: { name: `c-${agentId.slice(0, 8)}`, status: 'healthy' },
    nodes: [node('n1', 1000), node('n2', 3000)],
    namespaces: [{ name: 'shop' }],
    workloads: [
      {
        namespace: 'shop',
        name: 'web',
        kind: 'Deployment',
        replicas_desired: 3,
        replicas_ready: 2,
      },
    ],
    pods: [
      pod('web-a', 'Running', 'n1'),
      pod('web-b', 'Running', 'n2'),
      pod('web-c', 'Running', 'n2'),
      pod('web-d', 'Pending', null),
    ],
  };
}

/** The replicas series of inventoryAt's Deployment, 3 desired, 2 ready. */
const replicasAt = (time: Date) =>
  (['desired', 'ready'] as const).map((type) => ({
    labels_key: `{type="${type}"}`,
    labels: { type },
    data: [{ time: time.toISOString(), avg_value: type === 'desired' ? 3 : 2 }],
  }));

/** An HTTP server that accepts connections and never answers. */
function startSilentServer(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer(() => {});
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

describe('series written after a sync', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let vm: TestVictoriaMetrics;
  let store: MetricsStore;
  let silent: Server;
  const deadS3 = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });

  const depsWith = (
    writeUrl: string | undefined,
    format: SeriesWriteFormat = 'remote_write',
  ): SyncDeps => ({
    db: database.as('sync').db,
    s3: deadS3,
    timeoutMs: 60_000,
    eventRetentionHours: 24,
    seriesWrites: seriesWrites(
      seriesWriterFromConfig({
        METRICS_URL: undefined,
        METRICS_WRITE_URL: writeUrl,
        METRICS_WRITE_FORMAT: format,
        METRICS_TENANT_HEADER: undefined,
        METRICS_SIGV4_REGION: undefined,
        METRICS_QUERY_TIMEOUT_MS: 10_000,
        METRICS_WRITE_TIMEOUT_MS: 300,
      }),
    ),
  });

  const recordFor = (agentId: string, time: Date) =>
    recordOf(
      `proxima.${tenant.clientSlug}.${tenant.envSlug}.${agentId}.kubernetes`,
      inventoryAt(agentId, time),
    );

  /**
   * One record through processRecord; `recordMs` is the record's own time,
   * `elapsedMs` until its series write ended too (as processBatch waits).
   */
  async function sync(deps: SyncDeps, time: Date) {
    const agentId = randomUUID();
    const started = performance.now();
    let written = false;
    const outcome = await processRecord(recordFor(agentId, time), deps);
    const recordMs = performance.now() - started;
    const writesDone = deps.seriesWrites?.settled().then(() => {
      written = true;
    });
    const writtenOnReturn = written;
    await writesDone;
    const elapsedMs = performance.now() - started;
    const cluster = await queryOne<{ id: string; environment_id: string }>(
      database.db,
      'select id, environment_id from clusters where agent_id = $1',
      [agentId],
    );
    return { outcome, cluster, recordMs, elapsedMs, writtenOnReturn };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    vm = await startVictoriaMetrics();
    store = prometheusStore({ baseUrl: vm.url, http: metricsHttp() });
    silent = await startSilentServer();
  });

  afterAll(async () => {
    deadS3.destroy();
    silent?.closeAllConnections();
    silent?.close();
    await vm?.stop();
    await database?.drop();
  });

  for (const [format, path] of [
    ['remote_write', '/api/v1/write'],
    ['vm_import', '/api/v1/import/prometheus'],
  ] as const) {
    it(`writes replicas, pod phases, node and pod usage that the queries read back (${format})`, async () => {
      // Prepare: a snapshot two minutes ago, read over the minute around it.
      const time = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 120_000);
      const qs = `start=${new Date(time.getTime() - 60_000).toISOString()}&end=${time.toISOString()}`;

      // Act
      const { outcome, cluster } = await sync(
        depsWith(`${vm.url}${path}`, format),
        time,
      );
      await vm.server.flush();

      // Assess
      expect(outcome).toBe('applied');
      const read = (query: string, extra = '') =>
        readClusterMetrics(
          store,
          cluster,
          parseMetricsRequest(query, qs + extra),
        );
      const replicas = await read(
        'replicas',
        '&namespace=shop&workload=web&workload_kind=Deployment',
      );
      expect(replicas.series).toEqual(replicasAt(time));
      const phases = await read('pods_by_phase');
      expect(
        phases.series.map((s) => [s.labels, s.data.map((p) => p.avg_value)]),
      ).toEqual([
        [{ phase: 'Running' }, [3]],
        [{ phase: 'Pending' }, [1]],
      ]);
      const nodes = await read('cpu_by_node');
      expect(
        nodes.series.map((s) => [s.labels, s.data.map((p) => p.avg_value)]),
      ).toEqual([
        [{ node: 'n2' }, [0.75]],
        [{ node: 'n1' }, [0.25]],
      ]);
      const podCpu = await read(
        'cpu_by_pod',
        '&namespace=shop&workload=web&workload_kind=Deployment',
      );
      expect(
        podCpu.series.map((s) => [s.labels, s.data.map((p) => p.avg_value)]),
      ).toEqual([
        [{ pod: 'web-a' }, [0.25]],
        [{ pod: 'web-b' }, [0.25]],
        [{ pod: 'web-c' }, [0.25]],
      ]);
      const memory = await read('memory_by_namespace');
      expect(
        memory.series.map((s) => [s.labels, s.data.map((p) => p.avg_value)]),
      ).toEqual([[{ namespace: 'shop' }, [300_000_000]]]);
      const restarts = await vm.server
        .flush()
        .then(() =>
          store.queryInstant(
            `sum(container_restarts_total{cluster_id="${cluster.id}"})`,
            time.getTime() / 1000,
          ),
        );
      expect(restarts.map((s) => s.points[0]?.[1])).toEqual(['4']);
    });
  }

  it('the series a sync wrote read back through the metrics route', async () => {
    // Prepare: the route over the same store, an operator of the tenant.
    const time = new Date(Math.floor(Date.now() / 60_000) * 60_000 - 180_000);
    const qs = `start=${new Date(time.getTime() - 60_000).toISOString()}&end=${time.toISOString()}`;
    const { outcome, cluster } = await sync(
      depsWith(`${vm.url}/api/v1/write`),
      time,
    );
    await vm.server.flush();
    await insertGrant(database.db, {
      email: 'sync-reader@example.test',
      role: 'operator',
      clientId: tenant.clientId,
    });
    setMetricsStore(store);
    const api = await startTestApi(database);
    try {
      const token = await api.token('sync-reader@example.test');
      const read = async (query: string, extra = '') => {
        const response = await api.get(
          `/api/v1/clusters/${cluster.id}/metrics/${query}?${qs}${extra}`,
          token,
        );
        expect(response.status, JSON.stringify(response.body)).toBe(200);
        return response.body.data as MetricsData;
      };
      const valuesOf = (data: MetricsData) =>
        data.series.map((s) => [s.labels, s.data.map((p) => p.avg_value)]);

      // Act
      const replicas = await read(
        'replicas',
        '&namespace=shop&workload=web&workload_kind=Deployment',
      );
      const phases = await read('pods_by_phase');
      const nodes = await read('cpu_by_node');

      // Assess
      expect(outcome).toBe('applied');
      expect(replicas).toEqual({
        series: replicasAt(time),
        truncated: false,
        step_seconds: 60,
      });
      expect(valuesOf(phases)).toEqual([
        [{ phase: 'Running' }, [3]],
        [{ phase: 'Pending' }, [1]],
      ]);
      expect(valuesOf(nodes)).toEqual([
        [{ node: 'n2' }, [0.75]],
        [{ node: 'n1' }, [0.25]],
      ]);
    } finally {
      await api.close();
      setMetricsStore('reset');
    }
  });

  it('a sync succeeds while the store is down', async () => {
    // Act: nothing listens on port 9.
    const { outcome, cluster } = await sync(
      depsWith('http://127.0.0.1:9/api/v1/write'),
      new Date(),
    );
    // Assess
    expect(outcome).toBe('applied');
    expect(cluster.id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('a sync succeeds when the store never answers, after the write deadline', async () => {
    // Prepare
    const { port } = silent.address() as AddressInfo;
    // Act
    const { outcome, elapsedMs, recordMs, writtenOnReturn } = await sync(
      depsWith(`http://127.0.0.1:${port}/api/v1/write`),
      new Date(),
    );
    // Assess: the 300 ms deadline ended the write, not a hang; the record
    // itself did not wait for it.
    expect(outcome).toBe('applied');
    expect(elapsedMs).toBeGreaterThanOrEqual(300);
    expect(writtenOnReturn).toBe(false);
    expect(recordMs).toBeLessThan(elapsedMs);
  });

  it('a batch returns only once the series writes of its records have ended', async () => {
    // Prepare: two records; the store never answers, the deadline is 300 ms.
    const { port } = silent.address() as AddressInfo;
    const deps = depsWith(`http://127.0.0.1:${port}/api/v1/write`);
    const records = [
      recordFor(randomUUID(), new Date()),
      recordFor(randomUUID(), new Date()),
    ].map((record, i) => ({
      ...record,
      attributes: {
        ...record.attributes,
        MessageGroupId: `group-${i}`,
        SequenceNumber: String(i + 1),
      },
    }));
    let settledEarly = true;
    const started = performance.now();

    // Act
    const response = await processBatch({ Records: records }, deps);
    const elapsedMs = performance.now() - started;
    await Promise.race([
      deps.seriesWrites?.settled().then(() => {
        settledEarly = true;
      }),
      new Promise((resolve) =>
        setImmediate(() => {
          settledEarly = false;
          resolve(undefined);
        }),
      ),
    ]);

    // Assess: nothing was left in flight when the batch returned.
    expect(response.batchItemFailures).toEqual([]);
    expect(elapsedMs).toBeGreaterThanOrEqual(300);
    expect(settledEarly).toBe(true);
  });
});
