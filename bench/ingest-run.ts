/** The ingest benchmark itself; see bench/ingest.ts. */
import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import { query } from '../shared/db/pool.ts';
import type { ProcessedRecord } from '../shared/ingest/process-record.ts';
import { generateInventory, type SizeName } from '../test/fixtures/generate.ts';
import { median, percentile } from './common.ts';
import { agentOf, BASE_AGENT, startBenchIngest } from './ingest-stack.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const SIZE = (process.env.BENCH_SIZE ?? 'medium') as SizeName;
const GZIP = (process.env.BENCH_GZIP ?? '1') !== '0';
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 45 * 60_000);
const sec = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

async function main() {
  // One generated inventory, re-stamped per cluster: distinct agent ids and
  // names, identical content (the sync does the same work for each).
  const timestamp = new Date(Date.now() - 60_000).toISOString();
  const base = JSON.stringify(
    generateInventory({
      size: SIZE,
      seed: 'bench',
      agentId: BASE_AGENT,
      clusterName: 'bench-base',
      timestamp,
    }),
  );
  const bodies = Array.from({ length: CLUSTERS }, (_, i) => {
    const json = Buffer.from(
      base
        .replaceAll(BASE_AGENT, agentOf(i))
        .replace('"name":"bench-base"', `"name":"bench-${i}"`),
    );
    return GZIP ? gzipSync(json) : json;
  });
  const jsonBytes = Buffer.byteLength(base);
  const wireBytes = bodies.reduce((n, b) => n + b.byteLength, 0);

  const sentAt = new Map<number, number>();
  const processed: ProcessedRecord[] = [];
  let allDone!: () => void;
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const stack = await startBenchIngest({
    concurrency: CONCURRENCY,
    afterSend: (seqs, at) => {
      for (const seq of seqs) sentAt.set(seq, at);
    },
    onProcessed: (info) => {
      processed.push(info);
      if (processed.length >= CLUSTERS) allDone();
    },
  });
  const { database, ingest } = stack;

  console.log(
    `publishing ${CLUSTERS} ${SIZE} inventories (${(jsonBytes / 1e6).toFixed(1)} MB JSON each, ${(wireBytes / CLUSTERS / 1e6).toFixed(2)} MB on the wire${GZIP ? ', gzip' : ''}), ${CONCURRENCY} concurrent handler batches`,
  );
  const nc = await connect({ servers: stack.natsUrl, name: 'bench-agents' });
  const js = jetstream(nc);
  const publishedAt = new Map<number, number>();
  const h = headers();
  if (GZIP) h.set('Content-Encoding', 'gzip');
  const start = Date.now();
  await Promise.all(
    bodies.map(async (body, i) => {
      const at = Date.now();
      const ack = await js.publish(
        `proxima.bench.production.${agentOf(i)}.kubernetes`,
        body,
        { headers: h, timeout: 120_000 },
      );
      publishedAt.set(ack.seq, at);
    }),
  );
  const publishMs = Date.now() - start;

  const timeout = setTimeout(() => allDone(), TIMEOUT_MS);
  await done;
  clearTimeout(timeout);
  const totalMs = Date.now() - start;

  const applied = processed.filter((p) => p.outcome === 'applied');
  const latency: number[] = [];
  const bridge: number[] = [];
  const queue: number[] = [];
  const decode: number[] = [];
  const sync: number[] = [];
  for (const p of applied) {
    const published = publishedAt.get(p.streamSeq ?? -1);
    const sent = sentAt.get(p.streamSeq ?? -1);
    if (published === undefined || sent === undefined) continue;
    latency.push(p.finishedAt - published);
    bridge.push(sent - published);
    queue.push(p.startedAt - sent);
    decode.push(p.decodeMs);
    sync.push(p.syncMs);
  }
  const [stored] = await query<{ n: number }>(
    database.db,
    'select count(*)::int as n from clusters where environment_id = $1',
    [stack.environmentId],
  );
  const row = (name: string, values: number[]) =>
    `  ${name.padEnd(28)} p50 ${sec(median(values)).padStart(9)}   p99 ${sec(percentile(values, 99)).padStart(9)}`;
  console.log(
    [
      '',
      `applied ${applied.length}/${CLUSTERS} (clusters stored: ${stored?.n ?? 0}; rejected ${processed.length - applied.length})`,
      `publish of all (JetStream acks)  ${sec(publishMs)}`,
      `publish to all applied           ${sec(totalMs)}`,
      `throughput                       ${((applied.length / totalMs) * 1000).toFixed(2)} clusters/s, ${((applied.length * jsonBytes) / 1e6 / (totalMs / 1000)).toFixed(1)} MB JSON/s`,
      `bridge: forwarded ${ingest.bridge.stats().forwarded}, claim checks ${ingest.bridge.stats().claimChecked}; poller batches ${ingest.poller.stats().batches}`,
      'publish-to-commit latency and where it went:',
      row('publish → commit', latency),
      row('bridge (publish → SQS ok)', bridge),
      row('queue (SQS ok → handler)', queue),
      row('decode (S3/gunzip, parse)', decode),
      row('sync transaction', sync),
      `  sum of sync transactions ${sec(sync.reduce((a, b) => a + b, 0))} over ${sec(totalMs)} wall (${CONCURRENCY} concurrent)`,
    ].join('\n'),
  );

  await nc.close();
  await stack.stop();
}

await main();
