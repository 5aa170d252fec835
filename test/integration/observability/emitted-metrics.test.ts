/**
 * The dashboard shows what the code emits. The custom metrics the
 * synthesized monitoring stack references (dashboard SEARCH expressions and
 * alarms in the K8sInventory namespace) are read from its template; then
 * the code runs as it does in production — agents' snapshots through NATS,
 * the bridge, the queue and the sync handler (a sync, a replay, a refusal,
 * a claim-checked body, a queue outage, the series write after a sync and
 * its failure), a live read and a rate-limited read whose limiter fails
 * through the API, and both sweeps' Lambda handlers — while every EMF line
 * written to stdout is kept. Each referenced metric must be among them with
 * its namespace and dimensions, and so must every metric the spec names.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler as eventRetention } from '../../../functions/sweeps/event-retention.ts';
import { handler as staleClusters } from '../../../functions/sweeps/stale-clusters.ts';
import { METRICS_NAMESPACE } from '../../../infra/constructs/service-function.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query } from '../../../shared/db/pool.ts';
import { setDb } from '../../../shared/db/process-pool.ts';
import { setLiveNatsTarget } from '../../../shared/live/nats.ts';
import type { SeriesWriter } from '../../../shared/metrics/writer.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { eventually } from '../../helpers/eventually.ts';
import {
  startResponder,
  type TestResponder,
} from '../../helpers/kube-query-responder.ts';
import { synthesizeApp } from '../../infra/synth.ts';
import { startWorld, type World } from '../ingest/support.ts';
import { captureStdout } from '../sweeps/support.ts';

/** The metrics the spec names (Observability, Change Records, Stale sweep). */
const SPEC_METRICS = [
  'proxima_k8s_clusters_synced_total',
  'proxima_k8s_sync_duration_seconds',
  'proxima_k8s_nodes_synced_total',
  'proxima_k8s_workloads_synced_total',
  'proxima_k8s_node_host_linkage_total',
  'proxima_k8s_spec_facts_not_newer_total',
];

interface Referenced {
  name: string;
  namespace: string;
  /** Dimension names the reference requires; none for a SEARCH by name. */
  dimensions: string[];
  where: string;
}

interface Emitted {
  name: string;
  namespace: string;
  dimensions: string[];
}

/** Every custom metric the monitoring template's dashboard and alarms read. */
function referencedMetrics(template: Record<string, unknown>): Referenced[] {
  const found: Referenced[] = [];
  const resources = template.Resources as Record<
    string,
    { Type: string; Properties: Record<string, unknown> }
  >;
  for (const [id, resource] of Object.entries(resources)) {
    const text = JSON.stringify(resource.Properties);
    if (resource.Type === 'AWS::CloudWatch::Dashboard') {
      // SEARCH('Namespace="K8sInventory" MetricName="…"', …), escaped twice.
      const search =
        /Namespace=\\+"([^"\\]+)\\+" MetricName=\\+"([^"\\]+)\\+"/g;
      for (const [, namespace = '', name = ''] of text.matchAll(search)) {
        found.push({ name, namespace, dimensions: [], where: id });
      }
      // A plain metric: ["K8sInventory", "name", "dim", "value", …].
      const plain = new RegExp(
        `\\[\\\\"${METRICS_NAMESPACE}\\\\",\\\\"([^"\\\\]+)\\\\"((?:,\\\\"[^"\\\\]+\\\\",\\\\"[^"\\\\]*\\\\")*)`,
        'g',
      );
      for (const [, name = '', rest = ''] of text.matchAll(plain)) {
        const parts = [...rest.matchAll(/\\"([^"\\]*)\\"/g)].map((m) => m[1]);
        const dimensions = parts.filter((_, i) => i % 2 === 0) as string[];
        found.push({
          name,
          namespace: METRICS_NAMESPACE,
          dimensions,
          where: id,
        });
      }
    }
    if (resource.Type === 'AWS::CloudWatch::Alarm') {
      const props = resource.Properties as {
        Namespace?: string;
        MetricName?: string;
        Dimensions?: { Name: string }[];
        Metrics?: {
          MetricStat?: {
            Metric: {
              Namespace: string;
              MetricName: string;
              Dimensions?: { Name: string }[];
            };
          };
        }[];
      };
      const metrics = [
        ...(props.MetricName
          ? [
              {
                Namespace: props.Namespace ?? '',
                MetricName: props.MetricName,
                Dimensions: props.Dimensions,
              },
            ]
          : []),
        ...(props.Metrics ?? []).flatMap((m) =>
          m.MetricStat ? [m.MetricStat.Metric] : [],
        ),
      ];
      for (const m of metrics) {
        if (m.Namespace !== METRICS_NAMESPACE) continue;
        found.push({
          name: m.MetricName,
          namespace: m.Namespace,
          dimensions: (m.Dimensions ?? []).map((d) => d.Name),
          where: id,
        });
      }
    }
  }
  return found;
}

/** The metrics of EMF lines, with their namespace and dimension sets. */
function emittedMetrics(lines: Record<string, unknown>[]): Emitted[] {
  const out: Emitted[] = [];
  for (const line of lines) {
    const aws = line._aws as
      | {
          CloudWatchMetrics: {
            Namespace: string;
            Dimensions: string[][];
            Metrics: { Name: string }[];
          }[];
        }
      | undefined;
    for (const directive of aws?.CloudWatchMetrics ?? []) {
      for (const metric of directive.Metrics) {
        for (const dimensions of directive.Dimensions.length > 0
          ? directive.Dimensions
          : [[]]) {
          out.push({
            name: metric.Name,
            namespace: directive.Namespace,
            dimensions,
          });
        }
      }
    }
  }
  return out;
}

describe('the metrics the dashboard and alarms read are the ones the code emits', () => {
  let referenced: Referenced[];
  let emitted: Emitted[];
  let world: World;
  let api: TestApi;
  let responder: TestResponder | undefined;

  beforeAll(async () => {
    const app = synthesizeApp();
    referenced = referencedMetrics(
      app.templates.monitoring.toJSON() as Record<string, unknown>,
    );

    // The series write after a sync: the first one lands, the next fails.
    let writes = 0;
    const seriesWriter: SeriesWriter = {
      async write() {
        writes++;
        if (writes > 1) throw new Error('the metrics store is down');
      },
    };
    world = await startWorld({ maxMessageBytes: 64 * 1024, seriesWriter });
    const out = captureStdout();
    try {
      await runEverything(world);
    } finally {
      out.restore();
    }
    emitted = emittedMetrics(out.json());
  }, 240_000);

  afterAll(async () => {
    await responder?.stop();
    await setLiveNatsTarget(undefined);
    await api?.close();
    await world?.stop();
  });

  async function runEverything(w: World): Promise<void> {
    const db = w.database.db;
    const agentId = randomUUID();
    const at = (minutes: number) =>
      new Date(Date.now() - 60 * 60_000 + minutes * 60_000).toISOString();
    const inventory = (minutes: number, extra: object = {}) => ({
      ...generateInventory({
        seed: agentId,
        agentId,
        clusterName: 'emf',
        timestamp: at(minutes),
      }),
      ...extra,
    });
    const subject = w.subjectFor(agentId);
    // A sync of a snapshot listing one workload twice; the same snapshot
    // again (not newer); a body the sync refuses; a subject the bridge
    // refuses.
    const first = inventory(0);
    const [workload] = first.workloads ?? [];
    if (!workload) throw new Error('the generated inventory has workloads');
    const twice = {
      ...first,
      workloads: [...(first.workloads ?? []), workload],
    };
    await w.publish(subject, twice);
    await w.publish(subject, twice);
    await w.publish(w.subjectFor(randomUUID()), '{"not": "an inventory"');
    await w.publish(w.subjectFor('not-an-agent-id'), '{}');
    // A later one padded past the queue's limit: sent by claim check.
    const second = inventory(5);
    await w.publish(subject, {
      ...second,
      workloads: (second.workloads ?? []).map((row, i) =>
        i === 0
          ? {
              ...row,
              annotations: { 'example.com/pad': 'x'.repeat(60 * 1024) },
            }
          : row,
      ),
    });
    await eventually(
      'four records settled',
      () => w.processed.length >= 4,
      60_000,
    );
    // The queue unreachable for a while: the bridge counts failed sends.
    w.relay.cut();
    await w.publish(subject, inventory(10));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    w.relay.restore();
    await eventually(
      'the record sent after the outage settled',
      () => w.processed.length >= 5,
      60_000,
    );

    // A live read, and a read whose rate limiter fails (it goes through).
    const cluster = await w.clusterOf(agentId);
    if (!cluster) throw new Error('the snapshot was not synced');
    await query(
      db,
      `update clusters set agent_version = 'v0.9.0' where id = $1`,
      [cluster.id],
    );
    api = await startTestApi(db);
    await setLiveNatsTarget({ url: w.nats.url });
    responder = await startResponder(w.nats.url, agentId, (request) => ({
      ok: true,
      agent_version: 'v0.9.0',
      observed_at: new Date().toISOString(),
      result: {
        kind: 'Deployment',
        namespace: 'namespace' in request ? request.namespace : '',
        name: 'name' in request ? request.name : '',
        object: { metadata: { name: 'name' in request ? request.name : '' } },
      },
    }));
    await insertGrant(db, {
      email: 'emf@example.com',
      role: 'operator',
      clientId: w.tenant.clientId,
    });
    const token = await api.token('emf@example.com');
    const live = await api.get(
      `/api/v1/clusters/${cluster.id}/live/manifest?kind=Deployment&namespace=shop&name=api`,
      token,
    );
    expect(live.status, JSON.stringify(live.body)).toBe(200);
    await query(
      db,
      `create function rate_limits_refuse() returns trigger language plpgsql
         as $$ begin raise exception 'limiter down'; end $$;
       create trigger refuse_rate_limits before insert or update on api_rate_limits
         for each row execute function rate_limits_refuse()`,
    );
    const limited = await api.get(
      `/api/v1/clusters/${cluster.id}/live/manifest?kind=Deployment&namespace=shop&name=api`,
      token,
    );
    expect(limited.status, JSON.stringify(limited.body)).toBe(200);

    // Both sweeps, as their Lambda handlers: a silent cluster, an old event.
    await query(
      db,
      `update clusters set last_seen_at = now() - interval '1 hour',
         agent_status = 'connected' where id = $1`,
      [cluster.id],
    );
    await query(
      db,
      `update k8s_events set last_seen = now() - interval '3 days'
        where id = (select id from k8s_events where cluster_id = $1 limit 1)`,
      [cluster.id],
    );
    setDb(db);
    try {
      await staleClusters({}, lambdaContext('stale-clusters'));
      await eventRetention({}, lambdaContext('event-retention'));
    } finally {
      setDb(undefined);
    }
    // The bridge reports its consumer lag every statsIntervalMs.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }

  const isEmitted = (wanted: {
    name: string;
    namespace: string;
    dimensions: string[];
  }) =>
    emitted.some(
      (e) =>
        e.name === wanted.name &&
        e.namespace === wanted.namespace &&
        wanted.dimensions.every((d) => e.dimensions.includes(d)),
    );

  it('reads at least the sync, bridge, sweep and limiter metrics from the template', () => {
    const names = new Set(referenced.map((r) => r.name));
    expect(names.size).toBeGreaterThanOrEqual(15);
    expect(referenced.every((r) => r.namespace === METRICS_NAMESPACE)).toBe(
      true,
    );
  });

  it('emits every custom metric the dashboard and alarms reference, in their namespace and dimensions', () => {
    const missing = referenced
      .filter((r) => !isEmitted(r))
      .map((r) => `${r.namespace}/${r.name} [${r.dimensions}] (${r.where})`);
    expect([...new Set(missing)]).toEqual([]);
  });

  it('emits every metric the spec names', () => {
    const missing = SPEC_METRICS.filter(
      (name) =>
        !isEmitted({ name, namespace: METRICS_NAMESPACE, dimensions: [] }),
    );
    expect(missing).toEqual([]);
  });
});
