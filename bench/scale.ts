/**
 * `npm run bench -- scale [--sizes=40k,400k,2m]`: the scale curve of the
 * read API. For each size, the API bench's world (bench/api-world.ts:
 * medium clusters of 2,000 pods seeded through the sync over four clients
 * of two environments, with their nodes, workloads, services, events and
 * event history) is built with pods/2,000 clusters, plus recorded changes,
 * deploys and alert groups in the proportion of the what-changed bench
 * (2,500 change rows and 1,000 alert groups a cluster, spread over 90 days);
 * then every route family is read from 8 callers (BENCH_REQUESTS, 400, per
 * family after a warm-up), and its p50/p99 printed per size side by side.
 * At the largest size, EXPLAIN (ANALYZE, BUFFERS) of the slowest statement
 * behind the reads is written beside the figures
 * (bench/results/scale-explain.txt).
 *
 * Sizes: 40k (20 clusters), 400k (200, the API bench's), 2m (1,000). The
 * default is 40k,400k. Past 24 clusters (three a tenant, BENCH_TEMPLATES)
 * the rest are cloned in SQL from the synced ones (bench/clone-clusters.ts):
 * syncing 1,000 medium clusters one by one takes over an hour on a 2-core
 * machine, cloning them a few minutes; the 2M world takes about 9 GB of disk.
 *
 * Writes bench/results/scale.json: per size and route p50/p99; the
 * objectives are the largest size's p99 (≤ 50 ms) and each route's p99
 * growth from 400k to the largest size (≤ 1.5×).
 */
import type { ChildProcess } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startApiServer } from '../infra/local/api-server.ts';
import { signLocalToken } from '../shared/auth/local-jwt.ts';
import { getConfig } from '../shared/config.ts';
import { createPool, type Db, query } from '../shared/db/pool.ts';
import {
  API_MEASURES,
  CLIENTS,
  explainReads,
  loadAverage,
  type Measured,
  measureScenarios,
  prepare,
  routeKey,
  scenarios,
  startLoadClient,
  TARGET_P99_MS,
} from './api-world.ts';
import { seedAlertGroups, seedChangeRows } from './changes-seed.ts';
import { benchDatabase, median, percentile } from './common.ts';
import { type Figure, resultsDir, round, writeResults } from './results.ts';

const SIZES: Record<string, number> = { '40k': 20, '400k': 200, '2m': 1000 };
const POD_LABEL: Record<string, string> = {
  '40k': '40k',
  '400k': '400k',
  '2m': '2M',
};
const CHANGES_PER_CLUSTER = 2_500;
const ALERT_GROUPS_PER_CLUSTER = 1_000;
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = 8;
const WARMUP = CONCURRENCY * 5;
const SEED_CONCURRENCY = Number(process.env.BENCH_SEED_CONCURRENCY ?? 2);
/**
 * Clusters synced through the real sync at each size, the rest cloned from
 * them in SQL (bench/clone-clusters.ts): three per tenant. The 40k world is
 * all synced.
 */
const TEMPLATES = Number(process.env.BENCH_TEMPLATES ?? 24);
/** Readers the requests are spread over: the timeline and what-changed routes allow 60 a minute each. */
const READERS = 40;
const TARGET_GROWTH = 1.5;

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: { sizes: { type: 'string', default: '40k,400k' } },
});
const sizes = values.sizes.split(',').map((s) => s.trim().toLowerCase());
for (const size of sizes) {
  if (!(size in SIZES)) {
    throw new Error(`--sizes: each is one of ${Object.keys(SIZES).join(', ')}`);
  }
}

const readerEmail = (i: number) => `bench-reader-${i}@example.com`;

/** Recorded changes, deploys and alert groups in proportion to the clusters. */
async function seedChanges(db: Db, clusters: number): Promise<void> {
  await seedChangeRows(db, clusters * CHANGES_PER_CLUSTER);
  await seedAlertGroups(db, clusters * ALERT_GROUPS_PER_CLUSTER);
  for (let i = 0; i < READERS; i++) {
    for (const client of CLIENTS) {
      await query(
        db,
        `insert into user_grants (email, role, client_id)
         select $1, 'operator', id from clients where slug = $2`,
        [readerEmail(i), client],
      );
    }
  }
  // As autovacuum leaves long-lived rows: statistics current, visibility
  // map set (index-only scans skip the heap, as in production).
  await query(db, 'vacuum analyze');
  await query(db, 'checkpoint');
}

interface SizeResult {
  size: string;
  pods: number;
  results: Measured[];
  /** The whole seed, clusters to alert groups, statistics and checkpoint. */
  seedMs: number;
  databaseBytes: number;
}

async function measureSize(
  size: string,
  explain: boolean,
): Promise<SizeResult & { slowest?: string }> {
  const clusters = SIZES[size] ?? 0;
  const bench = await benchDatabase(`k8s_inventory_bench_scale_${size}`);
  const { db } = bench;
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-scale-'));
  let server: Awaited<ReturnType<typeof startApiServer>> | undefined;
  let apiDb: Db | undefined;
  let client: ChildProcess | undefined;
  try {
    console.log(`\n${POD_LABEL[size]} pods: ${clusters} medium clusters`);
    const worldStart = performance.now();
    await prepare(db, {
      clusters,
      concurrency: SEED_CONCURRENCY,
      templates: TEMPLATES,
    });
    const seedStart = performance.now();
    await seedChanges(db, clusters);
    const [counts] = await query<Record<string, number>>(
      db,
      `select (select count(*) from k8s_pods)::int as pods,
              (select count(*) from k8s_event_history)::int as event_history,
              (select count(*) from change_events)::int as changes,
              (select count(*) from alert_groups)::int as alert_groups,
              pg_size_pretty(pg_database_size(current_database())) as database,
              pg_database_size(current_database())::text as bytes`,
    );
    const seedMs = performance.now() - worldStart;
    console.log(
      `changes and alert groups seeded in ${((performance.now() - seedStart) / 1000).toFixed(1)} s: ${JSON.stringify(counts)}`,
    );
    console.log(
      `${POD_LABEL[size]} world seeded in ${(seedMs / 1000).toFixed(1)} s (load ${loadAverage()})`,
    );
    const clusterIds = (
      await query<{ id: string }>(db, 'select id from clusters order by id')
    ).map((r) => r.id);
    apiDb = createPool({
      connectionString: bench.url,
      max: getConfig().DATABASE_POOL_MAX,
    });
    server = await startApiServer({ port: 0, db: apiDb, dataDir });
    client = startLoadClient();
    const jwtKey = server.jwtKey;
    const tokens = await Promise.all(
      Array.from({ length: READERS }, (_, i) =>
        signLocalToken(jwtKey, {
          email: readerEmail(i),
          sub: `bench:reader-${i}`,
          ttlSeconds: 3600,
        }),
      ),
    );
    const results = await measureScenarios(
      db,
      scenarios(clusterIds, { extended: true }),
      {
        client,
        baseUrl: server.url,
        token: tokens[0] ?? '',
        tokens,
        requests: REQUESTS,
        warmup: WARMUP,
        concurrency: CONCURRENCY,
      },
    );
    let slowest: string | undefined;
    if (explain) {
      const explained = await explainReads(db, clusterIds);
      const worst = [...explained.statements].sort(
        (a, b) => b.executionMs - a.executionMs,
      )[0];
      if (worst) {
        slowest = `EXPLAIN (ANALYZE, BUFFERS) of the slowest statement behind the reads at ${POD_LABEL[size]} pods (${clusters} clusters): ${worst.label}, ${worst.executionMs} ms\n\n${worst.plan}\n`;
      }
    }
    return {
      size,
      pods: clusters * 2000,
      results,
      slowest,
      seedMs,
      databaseBytes: Number(counts?.bytes ?? 0),
    };
  } finally {
    await server?.close();
    await apiDb?.end();
    client?.kill();
    await rm(dataDir, { recursive: true, force: true });
    await bench.close();
  }
}

const measured: SizeResult[] = [];
let slowestPlan: string | undefined;
for (const [i, size] of sizes.entries()) {
  const result = await measureSize(size, i === sizes.length - 1);
  measured.push(result);
  slowestPlan = result.slowest ?? slowestPlan;
}

const routes = measured[0]?.results.map((r) => r.name) ?? [];
const figures: Record<string, Figure> = {};
for (const m of measured) {
  figures[`${m.size}.seed_s`] = { value: round(m.seedMs / 1000), unit: 's' };
  figures[`${m.size}.database_mb`] = {
    value: Math.round(m.databaseBytes / 1e6),
    unit: 'MB',
  };
}
const byRoute = (m: SizeResult, route: string) =>
  m.results.find((r) => r.name === route)?.latencies ?? [];
const failuresOf = (m: SizeResult, route: string) =>
  [
    ...(m.results.find((r) => r.name === route)?.failures.values() ?? []),
  ].reduce((a, b) => a + b, 0);
console.log(
  `\nscale curve: p50 / p99 in ms per route family, ${CONCURRENCY} callers, ${REQUESTS} requests each`,
);
console.log(
  ['route', ...measured.map((m) => `${POD_LABEL[m.size]} pods`)].join('\t'),
);
const largest = measured.at(-1);
const base = measured.find((m) => m.size === '400k');
for (const route of routes) {
  const key = routeKey(route);
  const cells = measured.map((m) => {
    const l = byRoute(m, route);
    figures[`${m.size}.${key}.p50_ms`] = {
      value: round(median(l)),
      unit: 'ms',
    };
    figures[`${m.size}.${key}.p99_ms`] = {
      value: round(percentile(l, 99)),
      unit: 'ms',
    };
    const failed = failuresOf(m, route);
    figures[`${m.size}.${key}.failures`] = { value: failed, unit: 'requests' };
    return `${median(l).toFixed(1)} / ${percentile(l, 99).toFixed(1)}${failed ? ` (${failed} not 200)` : ''}`;
  });
  console.log([route, ...cells].join('\t'));
  if (largest) {
    const p99 = percentile(byRoute(largest, route), 99);
    figures[`${largest.size}.${key}.p99_ms`] = {
      value: round(p99),
      unit: 'ms',
      objective: `Read API p99 at ${POD_LABEL[largest.size]} pods: ${route}`,
      target: { max: TARGET_P99_MS, text: `≤ ${TARGET_P99_MS} ms` },
      detail: measured
        .map(
          (m) =>
            `${POD_LABEL[m.size]} p99 ${percentile(byRoute(m, route), 99).toFixed(0)} ms`,
        )
        .join(', '),
    };
  }
  if (base && largest && largest.size !== base.size) {
    const growth =
      percentile(byRoute(largest, route), 99) /
      percentile(byRoute(base, route), 99);
    figures[`growth.${key}`] = {
      value: round(growth),
      unit: '×',
      objective: `Read API p99 growth, 400k → ${POD_LABEL[largest.size]} pods: ${route}`,
      target: { max: TARGET_GROWTH, text: `≤ ${TARGET_GROWTH}×` },
    };
  }
}
if (slowestPlan) {
  const path = join(resultsDir(), 'scale-explain.txt');
  writeFileSync(path, slowestPlan);
  console.log(`\n${slowestPlan}\nwritten to ${path}`);
}
await writeResults({
  name: 'scale',
  measures: [...API_MEASURES, 'bench/scale.ts', 'bench/clone-clusters.ts'],
  figures,
  notes: [
    `sizes measured: ${measured.map((m) => `${POD_LABEL[m.size]} pods (${m.pods / 2000} clusters)`).join(', ')}${sizes.includes('2m') ? '' : '; 2M not measured in this run (--sizes=40k,400k,2m)'}`,
  ],
});
