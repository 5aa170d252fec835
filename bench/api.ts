/**
 * `npm run bench -- api`: the read API's latency at volume. A database of
 * 200 medium clusters (about 400k pods), seeded through the sync, spread
 * over four clients of two environments each; then the local API server
 * and a caller holding `operator` client-wide on every client.
 *
 * The database is checkpointed after the seed, and its files are read into
 * the page cache before each scenario (warmCache), so the reads are
 * measured warm. The server has its own pool of DATABASE_POOL_MAX
 * connections, as `npm start` gives it.
 *
 * Each scenario sends a fixed number of requests from 8 concurrent loops
 * over keep-alive HTTP, after a warm-up, to clusters (or list pages) picked
 * at random, and reports p50, p99, requests/s, failures (any status but 200)
 * and whether p99 is within the 50 ms target, with the CPU time one request
 * cost the server, the load client and the PostgreSQL processes on this
 * machine (where the two cores went). The requests come from a load
 * client in its own process (bench/api-load.ts), as a real client's would:
 * it shares the machine's two cores, not the server's event loop.
 *
 * Last, EXPLAIN (ANALYZE, BUFFERS) of the statements behind the slow reads,
 * recorded from the domain functions themselves (so the text and the values
 * are exactly what the API sends), with every sequential scan of a big
 * table flagged.
 *
 * Environment: BENCH_CLUSTERS (200), BENCH_REQUESTS per scenario (400),
 * BENCH_CONCURRENCY (8), BENCH_API_POOL (the server's connections;
 * DATABASE_POOL_MAX, 4), BENCH_SEED_CONCURRENCY (2 syncs at a time),
 * BENCH_VACUUM=1 to run `vacuum analyze` instead of `analyze`,
 * BENCH_KEEP=1 to leave the database in place (on DATABASE_URL's server),
 * and BENCH_REUSE=1 to measure a kept database again without re-seeding it
 * (when it holds BENCH_CLUSTERS clusters; it is kept again afterwards). A
 * kept database ages: its events leave the past hour's warning counts
 * after an hour, and the 24-hour events list after a day.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../infra/local/api-server.ts';
import { AccessContext } from '../shared/auth/access.ts';
import { listGrants } from '../shared/auth/grants.ts';
import { signLocalToken } from '../shared/auth/local-jwt.ts';
import { listClusters } from '../shared/clusters/repo.ts';
import { clusterListQuery } from '../shared/clusters/route.ts';
import { getClusterSummary } from '../shared/clusters/summary.ts';
import { getConfig } from '../shared/config.ts';
import {
  createPool,
  type Db,
  type Queryable,
  query,
  type Row,
} from '../shared/db/pool.ts';
import { parseQueryString, readRouteQuery } from '../shared/http/query.ts';
import { listPods } from '../shared/inventory/lists.ts';
import { listNamespaceUsage } from '../shared/inventory/namespaces.ts';
import { listNodeCapacity } from '../shared/inventory/nodes.ts';
import { syncInventory } from '../shared/sync/sync.ts';
import { parseInventory } from '../shared/wire/inventory.ts';
import { generateInventory } from '../test/fixtures/generate.ts';
import type { LoadBatch, LoadResult } from './api-load.ts';
import {
  benchDatabase,
  createBenchTenants,
  median,
  ms,
  percentile,
  planSummary,
  type BenchTenant as Tenant,
} from './common.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
/** The API server's connections: the local stack's (DATABASE_POOL_MAX). */
const API_POOL = Number(
  process.env.BENCH_API_POOL ?? getConfig().DATABASE_POOL_MAX,
);
const SEED_CONCURRENCY = Number(process.env.BENCH_SEED_CONCURRENCY ?? 2);
const VACUUM = process.env.BENCH_VACUUM === '1';
const REUSE = process.env.BENCH_REUSE === '1';
const KEEP = REUSE || process.env.BENCH_KEEP === '1';
/** Warm-up requests per scenario: a few per loop, not measured. */
const WARMUP = CONCURRENCY * 5;
const TARGET_P99_MS = 50;

const CLIENTS = ['acme', 'globex', 'initech', 'umbrella'];
const ENVIRONMENTS = ['production', 'staging'];
const EMAIL = 'bench-reader@example.com';
/** A substring common in generated pod names (about 15% of a cluster's pods). */
const POD_SEARCH = 'worker';
/** A table with at least this many rows is big: a seq scan of it is flagged. */
const BIG_TABLE_ROWS = 10_000;

const log = (line: string) => process.stderr.write(`${line}\n`);

function loadAverage(): string {
  return loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

// ------------------------------------------------------------------ seed

const createTenants = (db: Db) => createBenchTenants(db, CLIENTS, ENVIRONMENTS);

/** Syncs CLUSTERS generated medium inventories; returns each sync's ms. */
async function seed(db: Db, tenants: readonly Tenant[]): Promise<number[]> {
  const timings: number[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < CLUSTERS) {
      const index = next;
      next += 1;
      const tenant = tenants[index % tenants.length] as Tenant;
      const agentId = randomUUID();
      const inventory = parseInventory(
        generateInventory({
          size: 'medium',
          seed: index + 1,
          agentId,
          clusterName: `${tenant.clientSlug}-${tenant.envSlug}-${String(index).padStart(3, '0')}`,
          // Just before now: events stay inside the 24 h retention and the
          // past hour's warnings are there to count.
          timestamp: new Date(Date.now() - 60_000).toISOString(),
        }),
      );
      const started = performance.now();
      await syncInventory(db, { ...tenant, agentId }, inventory);
      timings.push(performance.now() - started);
      done += 1;
      if (done % 20 === 0 || done === CLUSTERS) {
        log(`  synced ${done}/${CLUSTERS} (load ${loadAverage()})`);
      }
    }
  };
  await Promise.all(Array.from({ length: SEED_CONCURRENCY }, worker));
  return timings;
}

// ------------------------------------------------------------------ load

/**
 * Reads every table and index of the database into the OS page cache
 * (pg_prewarm, 'read' mode), so the reads are measured warm, as on the
 * deployed instance whose memory holds this data. On this machine the
 * page cache is reclaimed within minutes even with most memory free
 * (1.4 GB of these files: 180 MB gone after 90 s idle), and a cold read
 * from disk stalls a request for 0.1–1.3 s. Returns the MB read.
 */
async function warmCache(db: Db): Promise<number> {
  await query(db, 'create extension if not exists pg_prewarm');
  const [warmed] = await query<{ blocks: string }>(
    db,
    `select sum(pg_prewarm(c.oid, 'read'))::text as blocks
     from pg_class c
     where c.relkind in ('r', 'i', 'm', 't') and c.relpersistence <> 't'`,
  );
  return (Number(warmed?.blocks ?? 0) * 8192) / 1e6;
}

interface Scenario {
  name: string;
  /** A fresh request path (random cluster or page) per call. */
  path: () => string;
}

interface Measured {
  name: string;
  latencies: number[];
  failures: Map<number, number>;
  wallMs: number;
  /** CPU time over the scenario: where the machine's two cores went. */
  cpuMs: { server: number; client: number; postgres: number };
}

/**
 * CPU time used so far by the PostgreSQL processes on this machine (0 when
 * the server runs elsewhere or there is no /proc), from utime and stime in
 * /proc/PID/stat, in clock ticks of 10 ms (Linux's usual USER_HZ).
 */
async function postgresCpuMs(): Promise<number> {
  const entries = await readdir('/proc').catch(() => [] as string[]);
  let ticks = 0;
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    // The command name is in parentheses and may hold spaces.
    const close = stat.lastIndexOf(')');
    if (!stat.slice(stat.indexOf('(') + 1, close).startsWith('postgres')) {
      continue;
    }
    // After ")": state is field 3; utime and stime are fields 14 and 15.
    const fields = stat.slice(close + 2).split(' ');
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10;
}

/** The load client's process (bench/api-load.ts). */
function startLoadClient(): ChildProcess {
  return fork(new URL('./api-load.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Sends `count` requests of a scenario from the load client. */
async function run(
  client: ChildProcess,
  baseUrl: string,
  token: string,
  scenario: Scenario,
  count: number,
): Promise<Measured> {
  const batch: LoadBatch = {
    baseUrl,
    token,
    paths: Array.from({ length: count }, () => scenario.path()),
    concurrency: CONCURRENCY,
  };
  const result = new Promise<LoadResult>((resolve, reject) => {
    client.once('message', (message) => resolve(message as LoadResult));
    client.once('exit', (code) =>
      reject(new Error(`load client exited (${code})`)),
    );
  });
  const serverBefore = process.cpuUsage();
  const postgresBefore = await postgresCpuMs();
  client.send(batch);
  const { latencies, failures, wallMs, cpuMs } = await result;
  const server = process.cpuUsage(serverBefore);
  const postgres = (await postgresCpuMs()) - postgresBefore;
  client.removeAllListeners('exit');
  return {
    name: scenario.name,
    latencies,
    failures: new Map(failures),
    wallMs,
    cpuMs: {
      server: (server.user + server.system) / 1000,
      client: cpuMs,
      postgres,
    },
  };
}

function table(results: readonly Measured[]): string {
  const header = [
    'scenario',
    'p50',
    'p99',
    'req/s',
    'failures',
    'p99 ≤ 50 ms',
    'CPU ms/req: server',
    'client',
    'postgres',
  ];
  const rows = results.map((r) => {
    const p99 = percentile(r.latencies, 99);
    const failed = [...r.failures.values()].reduce((a, b) => a + b, 0);
    const detail = [...r.failures]
      .map(([status, n]) => `${n}×${status || 'error'}`)
      .join(' ');
    return [
      r.name,
      ms(median(r.latencies)),
      ms(p99),
      ((r.latencies.length / r.wallMs) * 1000).toFixed(0),
      failed === 0 ? '0' : `${failed} (${detail})`,
      p99 <= TARGET_P99_MS ? 'yes' : 'NO',
      ...[r.cpuMs.server, r.cpuMs.client, r.cpuMs.postgres].map((cpu) =>
        (cpu / r.latencies.length).toFixed(1),
      ),
    ];
  });
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) =>
        i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0),
      )
      .join('  ');
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
  ].join('\n');
}

// --------------------------------------------------------------- explain

interface Recorded {
  label: string;
  text: string;
  values: unknown[];
}

/** Runs every statement on `db` and records its text and values. */
function recording(
  db: Queryable,
  into: Recorded[],
  label: () => string,
): Queryable {
  return {
    query<R extends Row = Row>(text: string, values: readonly unknown[] = []) {
      into.push({ label: label(), text, values: [...values] });
      return db.query<R>(text, values);
    },
  };
}

/** A long literal id array in a plan line, shortened to its count. */
const UUID_ARRAY = /'\{[0-9a-f-]{36}(?:,[0-9a-f-]{36})*\}'::uuid\[\]/g;

function shorten(line: string): string {
  return line.replace(
    UUID_ARRAY,
    (ids) => `'{${ids.split(',').length} ids}'::uuid[]`,
  );
}

function shortValues(values: readonly unknown[]): string {
  return JSON.stringify(
    values.map((v) => (Array.isArray(v) ? `[${v.length} ids]` : v)),
  );
}

interface PlanSummary {
  indexes: string[];
  seqScans: string[];
  executionMs: string;
}

const summarize = (plan: readonly string[]): PlanSummary => planSummary(plan);

async function explainReads(db: Db, clusterIds: readonly string[]) {
  const recorded: Recorded[] = [];
  let current = '';
  const rec = recording(db, recorded, () => current);
  const cluster = pick(clusterIds);
  const access = new AccessContext(
    { sub: 'bench', email: EMAIL },
    await listGrants(db, EMAIL),
  );
  const scope = access.scopeFor('assets:read');

  for (const perPage of [20, 100]) {
    current = `clusters include=capacity, per_page=${perPage}`;
    const q = readRouteQuery(
      `include=capacity&per_page=${perPage}`,
      clusterListQuery,
    );
    await listClusters(rec, scope, [q.filter], q.paging, {
      healthCounts: q.includeCapacity,
    });
  }
  current = 'summary';
  await getClusterSummary(rec, cluster);
  current = `pods q=${POD_SEARCH}&sort=-restarts`;
  await listPods(
    rec,
    cluster,
    parseQueryString(`q=${POD_SEARCH}&sort=-restarts`),
  );
  current = 'nodes/capacity';
  await listNodeCapacity(rec, cluster);
  current = 'namespaces/usage';
  await listNamespaceUsage(rec, cluster);

  const sizes = new Map(
    (
      await query<{ relname: string; rows: number }>(
        db,
        `select relname, reltuples::bigint as rows
           from pg_class
          where relkind = 'r' and relnamespace = 'public'::regnamespace`,
      )
    ).map((r) => [r.relname, r.rows]),
  );

  const lines: string[] = [];
  const plans: string[] = [];
  for (const [i, statement] of recorded.entries()) {
    const result = await db.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers) ${statement.text}`,
      statement.values,
    );
    const plan = result.rows.map((r) => r['QUERY PLAN']);
    const s = summarize(plan);
    const big = s.seqScans.filter(
      (table) => (sizes.get(table) ?? 0) >= BIG_TABLE_ROWS,
    );
    const seq =
      s.seqScans.length === 0
        ? 'none'
        : s.seqScans
            .map(
              (t) =>
                `${t} (${(sizes.get(t) ?? 0).toLocaleString('en-US')} rows)`,
            )
            .join(', ');
    lines.push(
      `${i + 1}. ${statement.label}: execution ${s.executionMs}; indexes ${s.indexes.join(', ') || '—'}; seq scans ${seq}${big.length > 0 ? `  <-- SEQ SCAN ON BIG TABLE: ${big.join(', ')}` : ''}`,
    );
    plans.push(
      [
        `--- ${i + 1}. ${statement.label}`,
        statement.text.trim().replace(/\n\s+/g, '\n  '),
        `-- values: ${shortValues(statement.values)}`,
        ...plan.map(shorten),
      ].join('\n'),
    );
  }
  return { cluster, lines, plans };
}

// ------------------------------------------------------------------ main

/** Seeds the clusters, refreshes the statistics, grants the reader. */
async function prepare(db: Db): Promise<void> {
  const tenants = await createTenants(db);
  const seedStart = performance.now();
  const timings = await seed(db, tenants);
  const seedMs = performance.now() - seedStart;
  const [counts] = await query<Record<string, number>>(
    db,
    `select (select count(*) from clusters) as clusters,
            (select count(*) from k8s_nodes) as nodes,
            (select count(*) from k8s_pods) as pods,
            (select count(*) from k8s_workloads) as workloads,
            (select count(*) from k8s_events) as events,
            pg_size_pretty(pg_total_relation_size('k8s_pods')) as pods_size`,
  );
  console.log(
    `seeded in ${(seedMs / 1000).toFixed(1)} s (${SEED_CONCURRENCY} syncs at a time; one sync median ${ms(median(timings))}, p99 ${ms(percentile(timings, 99))}): ${JSON.stringify(counts)}`,
  );
  const analyzeStart = performance.now();
  await query(db, VACUUM ? 'vacuum analyze' : 'analyze');
  console.log(
    `${VACUUM ? 'vacuum analyze' : 'analyze'}: ${ms(performance.now() - analyzeStart)}`,
  );
  // The seed leaves ~1 GB of WAL and dirty pages: written back now, not
  // while the reads are measured.
  const checkpointStart = performance.now();
  await query(db, 'checkpoint');
  console.log(`checkpoint: ${ms(performance.now() - checkpointStart)}`);

  for (const client of CLIENTS) {
    await query(
      db,
      `insert into user_grants (email, role, client_id)
       select $1, 'operator', id from clients where slug = $2`,
      [EMAIL, client],
    );
  }
}

async function main(): Promise<void> {
  const bench = await benchDatabase('k8s_inventory_bench_api', {
    reuse: REUSE,
  });
  const { db } = bench;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-api-'));
  let server: Awaited<ReturnType<typeof startApiServer>> | undefined;
  let apiDb: Db | undefined;
  let client: ChildProcess | undefined;
  try {
    console.log(
      `api benchmark: ${CLUSTERS} medium clusters, ${CONCURRENCY} concurrent loops, ${REQUESTS} requests per scenario after ${WARMUP} warm-up; the API server's pool: ${API_POOL} connections`,
    );
    console.log(
      `machine: ${availableParallelism()} CPUs; load average at start ${loadAverage()}`,
    );
    const [held] = await query<{ n: number }>(
      db,
      'select count(*)::int as n from clusters',
    );
    if (held?.n === 0) {
      await prepare(db);
    } else if (held?.n === CLUSTERS) {
      console.log(`reusing the kept database: ${CLUSTERS} clusters`);
    } else {
      throw new Error(
        `the kept database holds ${held?.n} clusters, not ${CLUSTERS}: run without BENCH_REUSE`,
      );
    }
    const clusterIds = (
      await query<{ id: string }>(db, 'select id from clusters order by id')
    ).map((r) => r.id);

    // The server's own pool, as `npm start` gives it.
    apiDb = createPool({ connectionString: bench.url, max: API_POOL });
    server = await startApiServer({ port: 0, db: apiDb, dataDir });
    const loadClient = startLoadClient();
    client = loadClient;
    const token = await signLocalToken(server.jwtKey, {
      email: EMAIL,
      sub: 'bench:reader',
      ttlSeconds: 3600,
    });
    const pages = (perPage: number) =>
      Math.max(1, Math.ceil(clusterIds.length / perPage));
    const cluster = () => `/api/v1/clusters/${pick(clusterIds)}`;
    const scenarios: Scenario[] = [
      {
        name: 'clusters?include=capacity per_page=20',
        path: () =>
          `/api/v1/clusters?include=capacity&per_page=20&page=${1 + Math.floor(Math.random() * pages(20))}`,
      },
      {
        name: 'clusters?include=capacity per_page=100',
        path: () =>
          `/api/v1/clusters?include=capacity&per_page=100&page=${1 + Math.floor(Math.random() * pages(100))}`,
      },
      { name: 'clusters/{id}/summary', path: () => `${cluster()}/summary` },
      {
        name: `clusters/{id}/pods?q=${POD_SEARCH}&sort=-restarts`,
        path: () => `${cluster()}/pods?q=${POD_SEARCH}&sort=-restarts`,
      },
      {
        name: 'clusters/{id}/nodes/capacity',
        path: () => `${cluster()}/nodes/capacity`,
      },
      {
        name: 'clusters/{id}/namespaces/usage',
        path: () => `${cluster()}/namespaces/usage`,
      },
    ];

    const results: Measured[] = [];
    const loadBefore = loadAverage();
    const warmStart = performance.now();
    const warmedMb = await warmCache(db);
    console.log(
      `page cache warmed before each scenario: ${warmedMb.toFixed(0)} MB read in ${ms(performance.now() - warmStart)}`,
    );
    for (const scenario of scenarios) {
      await warmCache(db);
      await run(loadClient, server.url, token, scenario, WARMUP);
      results.push(
        await run(loadClient, server.url, token, scenario, REQUESTS),
      );
      log(`  measured ${scenario.name} (load ${loadAverage()})`);
    }
    const loadAfter = loadAverage();
    console.log(
      `\nlatency (client-side, keep-alive, ${CONCURRENCY} concurrent; target p99 ≤ ${TARGET_P99_MS} ms)`,
    );
    console.log(table(results));
    console.log(
      `load average: ${loadBefore} before the load, ${loadAfter} after`,
    );

    const explained = await explainReads(db, clusterIds);
    console.log(
      `\nEXPLAIN (ANALYZE, BUFFERS) of the statements behind the reads (cluster ${explained.cluster}; big table: ≥ ${BIG_TABLE_ROWS.toLocaleString('en-US')} rows)`,
    );
    for (const line of explained.lines) console.log(line);
    console.log('');
    for (const plan of explained.plans) console.log(`${plan}\n`);
  } finally {
    await server?.close();
    await apiDb?.end();
    client?.kill();
    await rm(dataDir, { recursive: true, force: true });
    // Kept only on DATABASE_URL's server: an embedded one stops with us.
    if (KEEP && process.env.DATABASE_URL) {
      log(`kept ${bench.url}`);
      await db.end();
    } else {
      await bench.close();
    }
  }
}

await main();
