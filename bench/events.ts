/**
 * `npm run bench -- events`: the events timeline's three reads over a
 * 14-day history of 200 clusters (about 5 million rows: BENCH_CLUSTERS x
 * BENCH_EVENTS_PER_CLUSTER, 200 x 25,000), seeded straight into
 * k8s_event_history with the shapes real clusters have (Deployments with
 * ReplicaSets and pods, a few reasons dominating):
 *
 * - a cluster's unfiltered 24-hour read (the Events tab),
 * - a workload's 7-day read (the workload page),
 * - a 14-day read with a reason filter,
 *
 * each BENCH_READS times (300) on clusters picked at random, through the
 * domain function the route calls (readTimeline), warm; p50 and p99 in ms
 * against the 50 ms target, then EXPLAIN (ANALYZE, BUFFERS) of each.
 *
 * BENCH_REUSE=1 keeps and reuses a seeded database on DATABASE_URL's server.
 */
import { randomUUID } from 'node:crypto';
import type { Db } from '../shared/db/pool.ts';
import { query } from '../shared/db/pool.ts';
import { timelineParameters } from '../shared/events/params.ts';
import {
  READ_TIMELINE,
  readTimeline,
  type TimelineQuery,
  timelineQuery,
  timelineValues,
} from '../shared/events/timeline.ts';
import { benchDatabase, percentile } from './common.ts';
import { type Figure, round, writeResults } from './results.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const PER_CLUSTER = Number(process.env.BENCH_EVENTS_PER_CLUSTER ?? 25_000);
const READS = Number(process.env.BENCH_READS ?? 300);
const REUSE = process.env.BENCH_REUSE === '1';
const NOW = new Date();
const TARGET_P99_MS = 50;
/** Each scenario's figures, for bench/results/events.json. */
const figures: Record<string, Figure> = {};

function log(line: string): void {
  console.log(line);
}

async function seedClusters(db: Db): Promise<string[]> {
  const existing = await query<{ id: string }>(
    db,
    'select id from clusters order by id',
  );
  if (REUSE && existing.length >= CLUSTERS) return existing.map((r) => r.id);
  const [client] = await query<{ id: string }>(
    db,
    `insert into clients (slug, name) values ('bench', 'bench') returning id`,
  );
  const [env] = await query<{ id: string }>(
    db,
    `insert into environments (client_id, slug, name)
     values ($1, 'prod', 'prod') returning id`,
    [client?.id],
  );
  const ids: string[] = [];
  for (let i = 0; i < CLUSTERS; i += 1) {
    const [asset] = await query<{ id: string }>(
      db,
      `insert into assets (client_id, environment_id, asset_type, name, status)
       values ($1, $2, 'kubernetes_cluster', $3, 'active') returning id`,
      [client?.id, env?.id, `bench-${i}`],
    );
    const [cluster] = await query<{ id: string }>(
      db,
      `insert into clusters (asset_id, client_id, environment_id, agent_id,
         name, slug, agent_version)
       values ($1, $2, $3, $4, $5, $5, 'v0.8.1') returning id`,
      [asset?.id, client?.id, env?.id, randomUUID(), `bench-${i}`],
    );
    ids.push(cluster?.id ?? '');
  }
  return ids;
}

// 40 Deployments per cluster (app-0 … app-39) in 8 namespaces; each event
// is the Deployment's (5%), a ReplicaSet's (15%) or a pod's (80%), at a
// random time of the 14 days, with one of ten reasons.
const SEED_HISTORY = `
  insert into k8s_event_history (cluster_id, seen_at, namespace,
    involved_kind, involved_name, type, reason, count, message, content_id)
  select $1, e.seen_at, e.namespace, e.kind, e.name, e.type, e.reason,
    e.count, e.message, k8s_event_content_id(e.seen_at, e.namespace, e.kind,
      e.name, e.type, e.reason, e.count, e.message)
  from (
    select
      now() - random() * interval '14 days' as seen_at,
      'ns-' || (w % 8) as namespace,
      case when r < 0.05 then 'Deployment' when r < 0.2 then 'ReplicaSet'
        else 'Pod' end as kind,
      case when r < 0.05 then 'app-' || w
        when r < 0.2 then 'app-' || w || '-' || hash
        else 'app-' || w || '-' || hash || '-' || suffix end as name,
      case when reason in ('BackOff', 'Unhealthy', 'FailedScheduling',
        'OOMKilling') then 'Warning' else 'Normal' end as type,
      reason,
      1 + (i % 7) as count,
      'event ' || i || ' of app-' || w as message
    from (
      select i, w, r,
        translate(lpad(((w * 7919 + i % 3) % 1000000000)::text, 9, '0'),
          '0123456789', '456789bcdf') as hash,
        translate(substr(md5(i::text), 1, 5), '0123456789abcdef',
          'bcdfghjklmnpqrst') as suffix,
        (array['BackOff', 'Pulled', 'Created', 'Started', 'Killing',
          'Unhealthy', 'FailedScheduling', 'ScalingReplicaSet',
          'SuccessfulCreate', 'OOMKilling'])[1 + (i * 31 % 97) % 10] as reason
      from (select i, i % 40 as w, random() as r
            from generate_series(1, $2::int) as i) s
    ) t
  ) e
  on conflict do nothing`;

async function seedHistory(db: Db, clusters: readonly string[]): Promise<void> {
  const [held] = await query<{ n: number }>(
    db,
    'select count(*)::int as n from k8s_event_history',
  );
  if (REUSE && (held?.n ?? 0) >= CLUSTERS * PER_CLUSTER * 0.9) {
    log(`reusing ${held?.n} history rows`);
    return;
  }
  const started = performance.now();
  for (const [index, id] of clusters.entries()) {
    await query(db, SEED_HISTORY, [id, PER_CLUSTER]);
    if ((index + 1) % 20 === 0) {
      log(`  seeded ${index + 1}/${clusters.length} clusters`);
    }
  }
  await query(db, 'analyze k8s_event_history');
  const [total] = await query<{ n: number }>(
    db,
    'select count(*)::int as n from k8s_event_history',
  );
  log(
    `seeded ${total?.n} rows in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
}

interface Scenario {
  name: string;
  params: () => Record<string, string>;
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

const DAY = 86_400_000;
const SCENARIOS: Scenario[] = [
  { name: "cluster's unfiltered 24 h", params: () => ({}) },
  {
    name: "workload's 7 days",
    params: () => {
      const w = Math.floor(Math.random() * 40);
      return {
        namespace: `ns-${w % 8}`,
        workload: `app-${w}`,
        workload_kind: 'Deployment',
        from: new Date(NOW.getTime() - 7 * DAY).toISOString(),
        to: NOW.toISOString(),
      };
    },
  },
  {
    name: '14 days, reason filter',
    params: () => ({
      reason: pick(['BackOff', 'OOMKilling', 'FailedScheduling', 'Killing']),
      from: new Date(NOW.getTime() - 14 * DAY).toISOString(),
      to: NOW.toISOString(),
    }),
  },
];

function queryOf(params: Record<string, string>): TimelineQuery {
  return timelineQuery(timelineParameters.parse(params), NOW);
}

async function measure(db: Db, clusters: readonly string[], s: Scenario) {
  const timings: number[] = [];
  let events = 0;
  for (let i = 0; i < READS + 20; i += 1) {
    const clusterId = pick(clusters);
    const started = performance.now();
    const timeline = await readTimeline(db, queryOf(s.params()), {
      clusterId,
      agentVersion: 'v0.8.1',
      historyDays: 14,
      now: NOW,
    });
    const took = performance.now() - started;
    if (i >= 20) {
      timings.push(took);
      events += timeline.events.length;
    }
  }
  const p50 = percentile(timings, 50);
  const p99 = percentile(timings, 99);
  const key = s.name.replace(/[^A-Za-z0-9]+/g, '_').replace(/^_|_$/g, '');
  figures[`${key}.p50_ms`] = { value: round(p50), unit: 'ms' };
  figures[`${key}.p99_ms`] = {
    value: round(p99),
    unit: 'ms',
    objective: `Events timeline p99: ${s.name}`,
    target: { max: TARGET_P99_MS, text: `≤ ${TARGET_P99_MS} ms` },
    detail: `p50 ${p50.toFixed(1)} ms; ${clusters.length} clusters × ${PER_CLUSTER.toLocaleString('en-US')} events over 14 days, one reader, through readTimeline`,
  };
  log(
    `${s.name.padEnd(28)} p50 ${p50.toFixed(1).padStart(6)} ms  p99 ${p99.toFixed(1).padStart(6)} ms  ` +
      `(${(events / READS).toFixed(0)} events a read)  target p99 <= 50 ms: ${p99 <= 50 ? 'met' : 'NOT met'}`,
  );
}

async function explain(db: Db, clusters: readonly string[], s: Scenario) {
  const values = timelineValues(queryOf(s.params()), pick(clusters));
  const plan = await query<{ 'QUERY PLAN': string }>(
    db,
    `explain (analyze, buffers, costs off) ${READ_TIMELINE}`,
    values,
  );
  log(`\nEXPLAIN ${s.name}:`);
  for (const row of plan) log(`  ${row['QUERY PLAN']}`);
}

const bench = await benchDatabase('bench_events', { reuse: REUSE });
try {
  const clusters = await seedClusters(bench.db);
  await seedHistory(bench.db, clusters);
  log(
    `\n${READS} reads per scenario over ${clusters.length} clusters (after 20 warm-up reads):`,
  );
  for (const s of SCENARIOS) await measure(bench.db, clusters, s);
  for (const s of SCENARIOS) await explain(bench.db, clusters, s);
  await writeResults({
    name: 'events',
    measures: ['shared/events', 'shared/db', 'migrations', 'bench/events.ts'],
    figures,
    db: bench.db,
  });
} finally {
  await bench.close();
}
