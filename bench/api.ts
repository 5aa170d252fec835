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
 * BENCH_VACUUM=0 to run only `analyze` after the seed instead of `vacuum
 * analyze` (the default: the tables as autovacuum leaves long-lived rows,
 * visibility map set, so index-only scans skip the heap as they do in
 * production),
 * BENCH_KEEP=1 to leave the database in place (on DATABASE_URL's server),
 * and BENCH_REUSE=1 to measure a kept database again without re-seeding it
 * (when it holds BENCH_CLUSTERS clusters; it is kept again afterwards). A
 * kept database ages: its events leave the past hour's warning counts
 * after an hour, and the 24-hour events list after a day.
 */

import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../infra/local/api-server.ts';
import { signLocalToken } from '../shared/auth/local-jwt.ts';
import { getConfig } from '../shared/config.ts';
import { createPool, type Db, query } from '../shared/db/pool.ts';
import {
  API_MEASURES,
  BIG_TABLE_ROWS,
  EMAIL,
  explainReads,
  loadAverage,
  log,
  measureScenarios,
  prepare,
  routeFigures,
  scenarios,
  startLoadClient,
  TARGET_P99_MS,
  table,
} from './api-world.ts';
import { benchDatabase } from './common.ts';
import { writeResults } from './results.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
/** The API server's connections: the local stack's (DATABASE_POOL_MAX). */
const API_POOL = Number(
  process.env.BENCH_API_POOL ?? getConfig().DATABASE_POOL_MAX,
);
const SEED_CONCURRENCY = Number(process.env.BENCH_SEED_CONCURRENCY ?? 2);
const VACUUM = process.env.BENCH_VACUUM !== '0';
const REUSE = process.env.BENCH_REUSE === '1';
const KEEP = REUSE || process.env.BENCH_KEEP === '1';
/** Warm-up requests per scenario: a few per loop, not measured. */
const WARMUP = CONCURRENCY * 5;

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
      await prepare(db, {
        clusters: CLUSTERS,
        concurrency: SEED_CONCURRENCY,
        vacuum: VACUUM,
      });
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
    const loadBefore = loadAverage();
    const results = await measureScenarios(db, scenarios(clusterIds), {
      client: loadClient,
      baseUrl: server.url,
      token,
      requests: REQUESTS,
      warmup: WARMUP,
      concurrency: CONCURRENCY,
    });
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
    await writeResults({
      name: 'api',
      measures: API_MEASURES,
      figures: routeFigures(results, `${CLUSTERS} medium clusters`),
      db,
    });
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
