/**
 * `npm run bench -- graph`: the relations graph and the PQL host search at
 * volume. The API bench's world (BENCH_CLUSTERS medium clusters, about
 * 2,000 pods each, seeded through the sync over four clients of two
 * environments each: 200 clusters are about 400k pods), plus one cluster
 * with the worst cases the issue names: a node running 110 pods, a Service
 * whose slices hold 1,000 endpoints (1,000 pods selected by one label) and
 * an Ingress routing to it; then BENCH_HOSTS CMDB hosts (100k), every node
 * of the world linked to one of them.
 *
 * Each scenario calls the domain function the route calls (readGraph,
 * listHosts) BENCH_REQUESTS times on a warm cache, one at a time, and
 * reports p50 and p99 against the 50 ms target; then EXPLAIN (ANALYZE,
 * BUFFERS) of every statement one call of each scenario ran, with each
 * sequential scan of a big table flagged. Results: bench/results/graph.json
 * (bench/graph-figures.ts).
 *
 * Each scenario runs on one connection, so the CPU its database backend
 * spent per call (from /proc, when the server is local) is reported beside
 * this process's: under a loaded machine CPU moves less than latency.
 *
 * Environment: BENCH_CLUSTERS (200), BENCH_HOSTS (100000), BENCH_REQUESTS
 * (200), BENCH_SEED_CONCURRENCY (2), BENCH_KEEP=1 to keep the database,
 * BENCH_REUSE=1 to measure a kept one again without seeding, BENCH_ONLY
 * (a regular expression) to run only the scenarios it matches.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import type { Scope } from '../shared/auth/access.ts';
import {
  type Db,
  type Queryable,
  query,
  queryOne,
  type Row,
} from '../shared/db/pool.ts';
import { readGraph } from '../shared/graph/walk.ts';
import { listHosts } from '../shared/hosts/repo.ts';
import { syncInventory } from '../shared/sync/sync.ts';
import { type Inventory, parseInventory } from '../shared/wire/inventory.ts';
import { createTenants, log, seed, worldInventory } from './api-world.ts';
import {
  benchDatabase,
  median,
  percentile,
  planSummary,
  type BenchTenant as Tenant,
} from './common.ts';
import {
  GRAPH_MEASURES,
  type GraphMeasured,
  graphFigures,
  GRAPH_TARGET_P99_MS as TARGET_P99_MS,
} from './graph-figures.ts';
import { writeResults } from './results.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const HOSTS = Number(process.env.BENCH_HOSTS ?? 100_000);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200);
const SEED_CONCURRENCY = Number(process.env.BENCH_SEED_CONCURRENCY ?? 2);
const REUSE = process.env.BENCH_REUSE === '1';
/** Only the scenarios whose name matches (a regular expression). */
const ONLY = new RegExp(process.env.BENCH_ONLY ?? '');
const KEEP = REUSE || process.env.BENCH_KEEP === '1';
const BIG_TABLE_ROWS = 10_000;
/** Plans of statements slower than this are printed whole. */
const SLOW_PLAN_MS = Number(process.env.BENCH_SLOW_PLAN_MS ?? 20);

const HOT = 'hot';

/**
 * A medium cluster with the issue's worst cases added: namespace `hot`
 * holding 1,000 pods labelled app=hot, selected by Service `hot` whose ten
 * slices target all of them, reached by Ingress `hot`; the first 110 of
 * them run on node `hot-node`, the others spread over the cluster's nodes.
 */
function hotInventory(tenant: Tenant, agentId: string): Inventory {
  const inventory = worldInventory(CLUSTERS, tenant, agentId) as Inventory;
  const [node] = inventory.nodes ?? [];
  const [template] = inventory.pods ?? [];
  if (!node || !template) throw new Error('generated inventory has no nodes');
  const nodes = inventory.nodes ?? [];
  nodes.push({ ...node, name: 'hot-node', uid: randomUUID() });
  inventory.namespaces?.push({
    ...(inventory.namespaces[0] as NonNullable<Inventory['namespaces']>[0]),
    name: HOT,
    uid: randomUUID(),
  });
  const pods = Array.from({ length: 1000 }, (_, i) => ({
    ...template,
    namespace: HOT,
    name: `hot-${String(i).padStart(4, '0')}`,
    uid: randomUUID(),
    labels: { app: HOT, shard: String(i % 10) },
    node_name:
      i < 110 ? 'hot-node' : (nodes[i % (nodes.length - 1)]?.name ?? null),
    workload_kind: null,
    workload_name: null,
    owner_kind: null,
    owner_name: null,
  }));
  inventory.pods?.push(...pods);
  const [service] = inventory.services ?? [];
  if (!service) throw new Error('generated inventory has no services');
  inventory.services?.push({
    ...service,
    namespace: HOT,
    name: HOT,
    uid: randomUUID(),
    selector: { app: HOT },
  });
  const [slice] = inventory.endpoint_slices ?? [];
  if (!slice) throw new Error('generated inventory has no endpoint slices');
  for (let s = 0; s < 10; s++) {
    inventory.endpoint_slices?.push({
      ...slice,
      namespace: HOT,
      name: `${HOT}-${s}`,
      uid: randomUUID(),
      service_name: HOT,
      endpoints: pods.slice(s * 100, s * 100 + 100).map((pod, i) => ({
        addresses: [`10.9.${s}.${i}`],
        ready: i % 17 !== 0,
        serving: true,
        terminating: false,
        node_name: pod.node_name,
        target_ref: { kind: 'Pod', name: pod.name },
      })),
    });
  }
  const [ingress] = inventory.ingresses ?? [];
  if (!ingress) throw new Error('generated inventory has no ingresses');
  inventory.ingresses?.push({
    ...ingress,
    namespace: HOT,
    name: HOT,
    uid: randomUUID(),
    rules: [
      {
        host: 'hot.example.com',
        paths: [{ path: '/', path_type: 'Prefix', service: HOT, port: 80 }],
      },
    ],
  });
  return inventory;
}

/** The API bench's world, then the cluster with the worst cases. */
async function seedWorld(db: Db, tenants: readonly Tenant[]): Promise<void> {
  await seed(db, tenants, {
    clusters: CLUSTERS,
    concurrency: SEED_CONCURRENCY,
  });
  const tenant = tenants[0] as Tenant;
  const agentId = randomUUID();
  await syncInventory(
    db,
    { ...tenant, agentId },
    parseInventory(hotInventory(tenant, agentId)),
  );
}

/**
 * BENCH_HOSTS hosts over every environment: one per node of the world
 * (linked to it), the rest unlinked; OS names from a small list.
 */
async function seedHosts(db: Db): Promise<void> {
  await query(
    db,
    `insert into hosts (client_id, environment_id, hostname, ip_address, os)
     select c.client_id, c.environment_id, c.slug || '-' || n.name,
            ('10.' || (row_number() over () / 65536) % 256 || '.'
              || (row_number() over () / 256) % 256 || '.'
              || row_number() over () % 256)::inet,
            (array['Ubuntu 22.04', 'Ubuntu 24.04', 'RHEL 9.4', 'Debian 12'])[1 + (hashtext(n.name) & 3)]
     from k8s_nodes n join clusters c on c.id = n.cluster_id`,
  );
  await query(
    db,
    `update k8s_nodes n set host_id = h.id
     from clusters c, hosts h
     where c.id = n.cluster_id and h.client_id = c.client_id
       and h.environment_id = c.environment_id
       and h.hostname = c.slug || '-' || n.name`,
  );
  await query(
    db,
    `insert into hosts (client_id, environment_id, hostname, os)
     select e.client_id, e.id, 'vm-' || g || '.' || e.slug,
            (array['Ubuntu 22.04', 'Windows Server 2022', 'RHEL 9.4', 'Debian 12'])[1 + g % 4]
     from generate_series(1, greatest($1::int - (select count(*) from hosts)::int, 0)) g
     join lateral (select * from environments order by id offset g % (select count(*) from environments) limit 1) e on true`,
    [HOSTS],
  );
}

interface Scenario {
  name: string;
  run: (db: Queryable) => Promise<unknown>;
}

interface Recorded {
  label: string;
  text: string;
  values: unknown[];
}

function recording(db: Queryable, into: Recorded[], label: string): Queryable {
  return {
    query<R extends Row = Row>(text: string, values: readonly unknown[] = []) {
      into.push({ label, text, values: [...values] });
      return db.query<R>(text, values);
    },
  };
}

async function objectOf(
  db: Db,
  sql: string,
  values: unknown[] = [],
): Promise<{ cluster: string; namespace: string | null; name: string }> {
  return queryOne(db, sql, values);
}

async function scenarios(db: Db): Promise<Scenario[]> {
  const hot = await objectOf(
    db,
    `select cluster_id as cluster, namespace, name from k8s_pods
     where namespace = $1 and name = 'hot-0000'`,
    [HOT],
  );
  const pod = await objectOf(
    db,
    `select p.cluster_id as cluster, p.namespace, p.name from k8s_pods p
     where p.workload_id is not null and p.namespace <> $1
     order by p.id limit 1`,
    [HOT],
  );
  const scope: Scope = {
    clientIds: (
      await query<{ id: string }>(db, 'select id from clients order by slug')
    ).map((r) => r.id),
    environments: [],
  };
  const oneEnvironment = await queryOne<{
    clientId: string;
    environmentId: string;
  }>(
    db,
    `select client_id as "clientId", id as "environmentId" from environments
     order by id limit 1`,
  );
  const graph = (
    label: string,
    target: { cluster: string; namespace: string | null; name: string },
    kind: 'Pod' | 'Node' | 'Service' | 'Ingress',
  ): Scenario[] =>
    [1, 2].map((depth) => ({
      name: `${label}, depth ${depth}`,
      run: (q) =>
        readGraph(q, target.cluster, {
          kind,
          namespace: kind === 'Node' ? undefined : (target.namespace ?? ''),
          name: target.name,
          depth,
          limit: 200,
        }),
    }));
  const pql = (label: string, text: string | undefined, s = scope) => ({
    name: `PQL ${label}`,
    run: (q: Queryable) =>
      listHosts(q, s, { pql: text, paging: { page: 1, perPage: 20 } }),
  });
  return [
    ...graph('pod of a deployment', pod, 'Pod'),
    ...graph('pod selected by 1,000-endpoint service', hot, 'Pod'),
    ...graph(
      'node with 110 pods',
      { cluster: hot.cluster, namespace: null, name: 'hot-node' },
      'Node',
    ),
    ...graph('service with 1,000 endpoints', { ...hot, name: HOT }, 'Service'),
    ...graph('ingress', { ...hot, name: HOT }, 'Ingress'),
    pql('none (all hosts, by hostname)', undefined),
    pql(
      'spec example 1',
      'cluster.name ~ "acme-production-*" AND host.os ~ "Ubuntu*"',
    ),
    pql('spec example 2', 'cluster.version ~ "v1.29*"'),
    pql(
      'host fields only',
      'host.os = "Debian 12" AND NOT host.hostname ~ "vm-1*"',
    ),
    pql('one environment, cluster field', 'cluster.status = "healthy"', {
      clientIds: [],
      environments: [oneEnvironment],
    }),
  ];
}

/**
 * CPU seconds a local process has used (user + system), from /proc; null
 * where the server is not on this machine. Under the shared machine's
 * load, CPU per call moves far less than wall-clock time does.
 */
function processCpuSeconds(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command (which may hold spaces): state is the 3rd.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return null;
  }
}
const CLOCK_TICKS = 100;

interface Measured {
  latencies: number[];
  /** CPU per call, in ms: the database backend's, and this process's. */
  dbCpuMs: number | null;
  nodeCpuMs: number;
}

/** One connection throughout, so its backend's CPU is the calls' own. */
async function measure(db: Db, scenario: Scenario): Promise<Measured> {
  const client = await db.connect();
  try {
    const { pid } = (
      await client.query<{ pid: number }>('select pg_backend_pid() as pid')
    ).rows[0] as { pid: number };
    for (let i = 0; i < 10; i++) await scenario.run(client);
    const latencies: number[] = [];
    const dbBefore = processCpuSeconds(pid);
    const nodeBefore = process.cpuUsage();
    for (let i = 0; i < REQUESTS; i++) {
      const started = performance.now();
      await scenario.run(client);
      latencies.push(performance.now() - started);
    }
    const node = process.cpuUsage(nodeBefore);
    const dbAfter = processCpuSeconds(pid);
    return {
      latencies,
      dbCpuMs:
        dbBefore === null || dbAfter === null
          ? null
          : ((dbAfter - dbBefore) * 1000) / REQUESTS,
      nodeCpuMs: (node.user + node.system) / 1000 / REQUESTS,
    };
  } finally {
    client.release();
  }
}

async function explainAll(db: Db, list: readonly Scenario[]): Promise<void> {
  const big = new Set(
    (
      await query<{ relname: string }>(
        db,
        'select relname from pg_class where relkind = $1 and reltuples >= $2',
        ['r', BIG_TABLE_ROWS],
      )
    ).map((r) => r.relname),
  );
  const recorded: Recorded[] = [];
  for (const scenario of list) {
    await scenario.run(recording(db, recorded, scenario.name));
  }
  const seen = new Set<string>();
  log('\nEXPLAIN (ANALYZE, BUFFERS) of each statement, first call only:');
  for (const entry of recorded) {
    const key = `${entry.label}\u0000${entry.text}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const plan = (
      await query<{ 'QUERY PLAN': string }>(
        db,
        `explain (analyze, buffers) ${entry.text}`,
        entry.values,
      )
    ).map((r) => r['QUERY PLAN']);
    const { indexes, seqScans, executionMs } = planSummary(plan);
    // A slow statement's whole plan, to see where its time went.
    if (Number.parseFloat(executionMs) > SLOW_PLAN_MS) {
      log(plan.map((line) => `      ${line}`).join('\n'));
    }
    const bigSeq = seqScans.filter((t) => big.has(t));
    const first = entry.text.replace(/\s+/g, ' ').trim().slice(0, 70);
    log(
      `- ${entry.label}: ${executionMs} | ${first}…\n    indexes: ${indexes.join(', ') || 'none'}${bigSeq.length > 0 ? `\n    SEQ SCAN OF A BIG TABLE: ${bigSeq.join(', ')}` : ''}`,
    );
  }
}

async function main(): Promise<void> {
  const bench = await benchDatabase('bench_graph', { reuse: REUSE });
  const { db } = bench;
  try {
    const clusters = Number(
      (
        await queryOne<{ n: number }>(
          db,
          'select count(*)::int as n from clusters',
        )
      ).n,
    );
    if (!REUSE || clusters !== CLUSTERS + 1) {
      log(`seeding ${CLUSTERS} medium clusters and the hot one…`);
      const started = performance.now();
      await seedWorld(db, await createTenants(db));
      log(`seeding ${HOSTS} hosts…`);
      await seedHosts(db);
      log(`seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    }
    await query(db, 'vacuum analyze');
    await query(db, 'create extension if not exists pg_prewarm');
    await query(
      db,
      `select sum(pg_prewarm(c.oid, 'read')) from pg_class c
       where c.relkind in ('r', 'i') and c.relpersistence <> 't'`,
    );
    const counts = await queryOne<{ pods: number; hosts: number }>(
      db,
      `select (select count(*) from k8s_pods)::int as pods,
              (select count(*) from hosts)::int as hosts`,
    );
    const list = (await scenarios(db)).filter((s) => ONLY.test(s.name));
    const rows: string[] = [];
    const measured: GraphMeasured[] = [];
    for (const scenario of list) {
      const { latencies, dbCpuMs, nodeCpuMs } = await measure(db, scenario);
      measured.push({
        name: scenario.name,
        kind: scenario.name.startsWith('PQL') ? 'pql' : 'graph',
        latencies,
      });
      const p99 = percentile(latencies, 99);
      rows.push(
        `| ${scenario.name} | ${median(latencies).toFixed(1)} | ${p99.toFixed(1)} | ${p99 <= TARGET_P99_MS ? 'yes' : 'NO'} | ${dbCpuMs === null ? '—' : dbCpuMs.toFixed(1)} | ${nodeCpuMs.toFixed(1)} |`,
      );
    }
    console.log(
      `\ngraph and PQL bench: ${CLUSTERS + 1} clusters, ${counts.pods} pods, ${counts.hosts} hosts, ${REQUESTS} calls per scenario, one at a time, load average ${loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}\n`,
    );
    console.log(
      '| scenario | p50 ms | p99 ms | p99 ≤ 50 ms | DB CPU ms/call | Node CPU ms/call |',
    );
    console.log('|---|---|---|---|---|---|');
    for (const row of rows) console.log(row);
    await explainAll(db, list);
    // A part (BENCH_ONLY) does not replace the whole run's results.
    if (process.env.BENCH_ONLY === undefined)
      await writeResults({
        name: 'graph',
        measures: GRAPH_MEASURES,
        figures: graphFigures(
          measured,
          `${CLUSTERS + 1} clusters, ${counts.pods.toLocaleString('en-US')} pods, ${counts.hosts.toLocaleString('en-US')} hosts`,
        ),
        db,
      });
  } finally {
    if (!KEEP) await bench.close();
    else await db.end();
  }
}

await main();
