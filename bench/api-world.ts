/**
 * The read API bench's world and load, shared by `npm run bench -- api`
 * (bench/api.ts) and `npm run bench -- scale` (bench/scale.ts): medium
 * clusters seeded through the sync over four clients of two environments
 * each, a reader holding `operator` client-wide on every client, the page
 * cache warmed before each scenario, requests sent from a load client in
 * its own process, and EXPLAIN (ANALYZE, BUFFERS) of the statements behind
 * the reads.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { AccessContext } from '../shared/auth/access.ts';
import { listGrants } from '../shared/auth/grants.ts';
import { clusterListQuery } from '../shared/clusters/params.ts';
import { listClusters } from '../shared/clusters/repo.ts';
import { getClusterSummary } from '../shared/clusters/summary.ts';
import { type Db, type Queryable, query, type Row } from '../shared/db/pool.ts';
import { parseQueryString, readRouteQuery } from '../shared/http/query.ts';
import { listPods } from '../shared/inventory/lists.ts';
import { listNamespaceUsage } from '../shared/inventory/namespaces.ts';
import { listNodeCapacity } from '../shared/inventory/nodes.ts';
import { syncInventory } from '../shared/sync/sync.ts';
import { parseInventory } from '../shared/wire/inventory.ts';
import { generateInventory } from '../test/fixtures/generate.ts';
import type { LoadBatch, LoadResult } from './api-load.ts';
import { cloneClusters } from './clone-clusters.ts';
import {
  type BenchTenant,
  createBenchTenants,
  median,
  ms,
  percentile,
  planSummary,
  postgresCpuMs,
} from './common.ts';
import { type Figure, round } from './results.ts';

/** The read API's target at p99. */
export const TARGET_P99_MS = 50;

export const CLIENTS = ['acme', 'globex', 'initech', 'umbrella'];
export const ENVIRONMENTS = ['production', 'staging'];
export const EMAIL = 'bench-reader@example.com';
/** A substring common in generated pod names (about 15% of a cluster's pods). */
export const POD_SEARCH = 'worker';
/** A table with at least this many rows is big: a seq scan of it is flagged. */
export const BIG_TABLE_ROWS = 10_000;

export const log = (line: string) => process.stderr.write(`${line}\n`);

export function loadAverage(): string {
  return loadavg()
    .map((v) => v.toFixed(2))
    .join(', ');
}

export function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

// ------------------------------------------------------------------ seed

export type Tenant = BenchTenant;

/** Every bench client with every environment. */
export const createTenants = (db: Db): Promise<Tenant[]> =>
  createBenchTenants(db, CLIENTS, ENVIRONMENTS);

export interface SeedOptions {
  /** Medium clusters (2,000 pods each). */
  clusters: number;
  /** Syncs at a time. */
  concurrency: number;
  /** `vacuum analyze` instead of `analyze` after the seed. */
  vacuum?: boolean;
  /**
   * Sync only this many clusters (a multiple of the tenants) and clone the
   * rest from them in SQL (bench/clone-clusters.ts): cluster i is a copy of
   * template i % templates, of the same tenant. Default: every cluster synced.
   */
  templates?: number;
}

/** The world's cluster `index`'s name. */
export const clusterName = (index: number, tenant: Tenant): string =>
  `${tenant.clientSlug}-${tenant.envSlug}-${String(index).padStart(3, '0')}`;

/** The world's cluster `index`: a generated medium inventory of `tenant`. */
export function worldInventory(
  index: number,
  tenant: Tenant,
  agentId: string,
): unknown {
  return generateInventory({
    size: 'medium',
    seed: index + 1,
    agentId,
    clusterName: clusterName(index, tenant),
    // Just before now: events stay inside the 24 h retention and the past
    // hour's warnings are there to count.
    timestamp: new Date(Date.now() - 60_000).toISOString(),
  });
}

/**
 * Syncs `clusters` generated medium inventories (or `templates` of them,
 * the rest cloned); returns each sync's ms.
 */
export async function seed(
  db: Db,
  tenants: readonly Tenant[],
  { clusters, concurrency, templates }: SeedOptions,
): Promise<number[]> {
  const CLUSTERS = Math.min(clusters, templates ?? clusters);
  if (CLUSTERS < clusters && CLUSTERS % tenants.length !== 0) {
    throw new Error(
      `templates: a multiple of the ${tenants.length} tenants, so a clone keeps its template's tenant`,
    );
  }
  const timings: number[] = [];
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < CLUSTERS) {
      const index = next;
      next += 1;
      const tenant = tenants[index % tenants.length] as Tenant;
      const agentId = randomUUID();
      const inventory = parseInventory(worldInventory(index, tenant, agentId));
      const started = performance.now();
      await syncInventory(db, { ...tenant, agentId }, inventory);
      timings.push(performance.now() - started);
      done += 1;
      if (done % 20 === 0 || done === CLUSTERS) {
        log(`  synced ${done}/${CLUSTERS} (load ${loadAverage()})`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  if (CLUSTERS < clusters) {
    const templateIds = await templateClusterIds(db, tenants, CLUSTERS);
    const clones = Array.from({ length: clusters - CLUSTERS }, (_, i) => {
      const index = CLUSTERS + i;
      return {
        templateId: templateIds[index % CLUSTERS] as string,
        name: clusterName(index, tenants[index % tenants.length] as Tenant),
      };
    });
    const started = performance.now();
    await cloneClusters(db, clones, concurrency, (n) => {
      if (n % 50 === 0 || n === clones.length) {
        log(`  cloned ${n}/${clones.length} (load ${loadAverage()})`);
      }
    });
    log(
      `  ${clones.length} clusters cloned from ${CLUSTERS} synced in ${ms(performance.now() - started)}`,
    );
  }
  return timings;
}

/** The synced clusters' ids, by world index. */
async function templateClusterIds(
  db: Db,
  tenants: readonly Tenant[],
  count: number,
): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) =>
    clusterName(i, tenants[i % tenants.length] as Tenant),
  );
  const rows = await query<{ id: string; name: string }>(
    db,
    'select id, name from clusters where name = any($1)',
    [names],
  );
  const byName = new Map(rows.map((r) => [r.name, r.id]));
  return names.map((name) => {
    const id = byName.get(name);
    if (!id) throw new Error(`template cluster ${name} not found`);
    return id;
  });
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
export async function warmCache(db: Db): Promise<number> {
  await query(db, 'create extension if not exists pg_prewarm');
  const [warmed] = await query<{ blocks: string }>(
    db,
    `select sum(pg_prewarm(c.oid, 'read'))::text as blocks
     from pg_class c
     where c.relkind in ('r', 'i', 'm', 't') and c.relpersistence <> 't'`,
  );
  return (Number(warmed?.blocks ?? 0) * 8192) / 1e6;
}

export interface Scenario {
  name: string;
  /** A fresh request path (random cluster or page) per call. */
  path: () => string;
}

export interface Measured {
  name: string;
  latencies: number[];
  failures: Map<number, number>;
  wallMs: number;
  /**
   * CPU time over the scenario: where the machine's two cores went.
   * postgres: this database's processes only (postgresCpuMs), 0 when the
   * server is not on this machine.
   */
  cpuMs: { server: number; client: number; postgres: number };
}

/** The load client's process (bench/api-load.ts). */
export function startLoadClient(): ChildProcess {
  return fork(new URL('./api-load.ts', import.meta.url), {
    execArgv: ['--import', 'tsx'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** Sends `count` requests of a scenario from the load client. */
export async function run(
  db: Db,
  client: ChildProcess,
  baseUrl: string,
  token: string,
  scenario: Scenario,
  count: number,
  concurrency: number,
  tokens?: string[],
): Promise<Measured> {
  const batch: LoadBatch = {
    baseUrl,
    token,
    ...(tokens ? { tokens } : {}),
    paths: Array.from({ length: count }, () => scenario.path()),
    concurrency,
  };
  const result = new Promise<LoadResult>((resolve, reject) => {
    client.once('message', (message) => resolve(message as LoadResult));
    client.once('exit', (code) =>
      reject(new Error(`load client exited (${code})`)),
    );
  });
  const serverBefore = process.cpuUsage();
  const postgresBefore = await postgresCpuMs(db);
  client.send(batch);
  const { latencies, failures, wallMs, cpuMs } = await result;
  const server = process.cpuUsage(serverBefore);
  const postgresAfter = await postgresCpuMs(db);
  // 0 when the server is not on this machine (nothing to read).
  const postgres =
    postgresBefore === undefined || postgresAfter === undefined
      ? 0
      : postgresAfter - postgresBefore;
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

export function table(results: readonly Measured[]): string {
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

export async function explainReads(db: Db, clusterIds: readonly string[]) {
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
  /** Each statement's execution time and plan text, in the order run. */
  const statements: { label: string; executionMs: number; plan: string }[] = [];
  for (const [i, statement] of recorded.entries()) {
    const result = await db.query<{ 'QUERY PLAN': string }>(
      `explain (analyze, buffers) ${statement.text}`,
      statement.values,
    );
    const plan = result.rows.map((r) => r['QUERY PLAN']);
    const s = planSummary(plan);
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
    statements.push({
      label: statement.label,
      executionMs: Number.parseFloat(s.executionMs),
      plan: plans.at(-1) ?? '',
    });
  }
  return { cluster, lines, plans, statements };
}

// ------------------------------------------------------------------ main

/** Seeds the clusters, refreshes the statistics, grants the reader. */
export async function prepare(db: Db, options: SeedOptions): Promise<void> {
  const VACUUM = options.vacuum ?? false;
  const tenants = await createTenants(db);
  const seedStart = performance.now();
  const timings = await seed(db, tenants, options);
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
    `seeded in ${(seedMs / 1000).toFixed(1)} s (${options.concurrency} syncs at a time; one sync median ${ms(median(timings))}, p99 ${ms(percentile(timings, 99))}): ${JSON.stringify(counts)}`,
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

/** What the read API's figures measure: a change here makes them stale. */
export const API_MEASURES = [
  'shared/http',
  'shared/auth',
  'shared/clusters',
  'shared/inventory',
  'shared/events',
  'shared/changes',
  'shared/db',
  'functions/api',
  'infra/local/api-server.ts',
  'migrations',
  'bench/api.ts',
  'bench/api-world.ts',
  'bench/api-load.ts',
];

/** The route families measured, each a fresh path per call. */
export function scenarios(
  clusterIds: readonly string[],
  options: { extended?: boolean } = {},
): Scenario[] {
  const pages = (perPage: number) =>
    Math.max(1, Math.ceil(clusterIds.length / perPage));
  const cluster = () => `/api/v1/clusters/${pick(clusterIds)}`;
  const base: Scenario[] = [
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
  if (!options.extended) return base;
  // The scale curve's world also holds changes and alert groups.
  return [
    ...base,
    { name: 'clusters/{id}/events', path: () => `${cluster()}/events` },
    {
      name: 'clusters/{id}/events/timeline',
      path: () => `${cluster()}/events/timeline`,
    },
    { name: 'clusters/{id}/changes', path: () => `${cluster()}/changes` },
  ];
}

export interface LoadTarget {
  client: ChildProcess;
  baseUrl: string;
  token: string;
  /** Readers to spread requests over (rate-limited routes); else `token`'s. */
  tokens?: string[];
  requests: number;
  warmup: number;
  concurrency: number;
}

/** Each scenario after a warm cache and a warm-up, one after the other. */
export async function measureScenarios(
  db: Db,
  list: readonly Scenario[],
  target: LoadTarget,
): Promise<Measured[]> {
  const results: Measured[] = [];
  const warmStart = performance.now();
  const warmedMb = await warmCache(db);
  console.log(
    `page cache warmed before each scenario: ${warmedMb.toFixed(0)} MB read in ${ms(performance.now() - warmStart)}`,
  );
  const { client, baseUrl, token, concurrency, tokens } = target;
  for (const scenario of list) {
    await warmCache(db);
    const send = (count: number) =>
      run(db, client, baseUrl, token, scenario, count, concurrency, tokens);
    await send(target.warmup);
    results.push(await send(target.requests));
    log(`  measured ${scenario.name} (load ${loadAverage()})`);
  }
  return results;
}

/** A route's key in a results file: its name without the punctuation. */
export function routeKey(name: string): string {
  return name
    .replace(/[{}]/g, '')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
}

/** p50, p99 (the objective) and CPU per request of each route family. */
export function routeFigures(
  results: readonly Measured[],
  world: string,
  objective = (route: string) => `Read API p99: ${route}`,
): Record<string, Figure> {
  const figures: Record<string, Figure> = {};
  for (const r of results) {
    const key = routeKey(r.name);
    const p50 = median(r.latencies);
    const p99 = percentile(r.latencies, 99);
    const per = (cpu: number) => round(cpu / r.latencies.length);
    figures[`${key}.p99_ms`] = {
      value: round(p99),
      unit: 'ms',
      objective: objective(r.name),
      target: { max: TARGET_P99_MS, text: `≤ ${TARGET_P99_MS} ms` },
      detail: `p50 ${ms(p50)}; ${world}, ${r.latencies.length} requests from 8 callers; CPU a request: PostgreSQL ${(r.cpuMs.postgres / r.latencies.length).toFixed(1)} ms, server ${(r.cpuMs.server / r.latencies.length).toFixed(1)} ms`,
    };
    figures[`${key}.p50_ms`] = { value: round(p50), unit: 'ms' };
    figures[`${key}.per_second`] = {
      value: round((r.latencies.length / r.wallMs) * 1000),
      unit: '/s',
    };
    figures[`${key}.server_cpu_ms`] = {
      value: per(r.cpuMs.server),
      unit: 'ms',
    };
    figures[`${key}.postgres_cpu_ms`] = {
      value: per(r.cpuMs.postgres),
      unit: 'ms',
    };
    const failed = [...r.failures.values()].reduce((a, b) => a + b, 0);
    figures[`${key}.failures`] = { value: failed, unit: 'requests' };
  }
  return figures;
}
