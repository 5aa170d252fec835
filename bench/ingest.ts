/**
 * `npm run bench -- ingest`: 200 clusters' medium inventories published at
 * once through the local stack's ingest wiring (nats-server, bridge, fauxqs,
 * poller, the real sync handler, PostgreSQL). Prints the time until all are
 * applied, throughput, publish-to-commit latency and where the time went.
 *
 * Knobs (environment): BENCH_CLUSTERS (200), BENCH_SIZE (medium),
 * BENCH_GZIP (1: bodies gzip as agents send them; 0: plain JSON, which goes
 * by S3 claim check), BENCH_CONCURRENCY (4 concurrent handler batches),
 * DATABASE_URL (else an embedded PostgreSQL).
 *
 * `--steady [--duration=180] [--interval=10]`: the steady state instead,
 * 1%-changed resyncs of every cluster (bench/ingest-steady.ts).
 *
 * The handlers' per-record logs and EMF lines are quieted unless LOG_LEVEL /
 * POWERTOOLS_METRICS_DISABLED say otherwise; they are read when the logger
 * and metrics load, so the benchmark itself is loaded after setting them.
 */
process.env.LOG_LEVEL ??= 'WARN';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';

// --steady: the steady-state resync benchmark (bench/ingest-steady.ts).
await import(
  process.argv.includes('--steady') ? './ingest-steady.ts' : './ingest-run.ts'
);
