/**
 * `npm run bench -- ingest --steady [--duration=180] [--interval=10]`: the
 * steady state of ingest through the local stack (NATS → bridge → queue →
 * sync). BENCH_CLUSTERS (200) medium clusters are first synced once; then,
 * for --duration seconds, each cluster resyncs every --interval seconds
 * (spread evenly) with 1% of its rows changed (pre-generated variants,
 * re-stamped per publish, gzip as agents send them).
 *
 * Prints resyncs per second, publish-to-commit p50/p99, where each resync's
 * time went (bridge, queue wait, decode and parse, validation, the
 * database), the CPU split by stage (decode and parse and validation are
 * synchronous, so their time is CPU; PostgreSQL's own CPU is read from
 * /proc; the rest of this process's CPU is the bridge, the queue emulator,
 * the poller and the sync's client side), and the implied fleet size: how many
 * clusters one sync worker (one record at a time) carries on the spec's
 * 5-minute interval, from the mean worker time per resync.
 */
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { connect, headers } from '@nats-io/transport-node';
import {
  generateInventory,
  mutateInventory,
  type SizeName,
} from '../shared/fixtures/generate.ts';
import type { ProcessedRecord } from '../shared/ingest/process-record.ts';
import { median, percentile, postgresCpuMs } from './common.ts';
import { agentOf, BASE_AGENT, startBenchIngest } from './ingest-stack.ts';

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: {
    steady: { type: 'boolean', default: false },
    duration: { type: 'string', default: '180' },
    interval: { type: 'string', default: '10' },
  },
});
const DURATION_S = Number(values.duration);
const INTERVAL_S = Number(values.interval);
if (!(DURATION_S > 0) || !(INTERVAL_S > 0)) {
  throw new Error('--duration and --interval are seconds, above 0');
}
const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const SIZE = (process.env.BENCH_SIZE ?? 'medium') as SizeName;
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const VARIANTS = 8;
const CHANGE_FRACTION = 0.01;
const FLEET_INTERVAL_S = 300;

const ms = (v: number) => `${Math.round(v)} ms`;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const mean = (v: readonly number[]) =>
  v.length === 0 ? 0 : v.reduce((a, b) => a + b, 0) / v.length;

async function main() {
  const sentAt = new Map<number, number>();
  const processed: ProcessedRecord[] = [];
  const stack = await startBenchIngest({
    concurrency: CONCURRENCY,
    afterSend: (seqs, at) => {
      for (const seq of seqs) sentAt.set(seq, at);
    },
    onProcessed: (info) => processed.push(info),
  });

  const first = generateInventory({
    size: SIZE,
    seed: 'bench',
    agentId: BASE_AGENT,
    clusterName: 'bench-base',
    timestamp: new Date(Date.now() - 3_600_000).toISOString(),
  });
  // Variants of the same cluster, each 1% changed from the first: a resync
  // sends one of them, so about 1% of rows differ from the stored ones.
  const variants = [
    first,
    ...Array.from({ length: VARIANTS - 1 }, (_, v) =>
      mutateInventory(first, {
        seed: v + 1,
        changeFraction: CHANGE_FRACTION,
        removeFraction: 0,
        timestamp: first.timestamp,
      }),
    ),
  ].map((inv) => JSON.stringify(inv));
  const stampOf = `"timestamp":"${first.timestamp}"`;
  // Level 1: the publisher shares this process's cores with what is
  // measured, and the default level costs it several times more CPU; the
  // backend's inflate costs about the same either way.
  const body = (variant: number, cluster: number, at: Date) =>
    gzipSync(
      (variants[variant] as string)
        .replace(stampOf, `"timestamp":"${at.toISOString()}"`)
        .replaceAll(BASE_AGENT, agentOf(cluster))
        .replace('"name":"bench-base"', `"name":"bench-${cluster}"`),
      { level: 1 },
    );

  const nc = await connect({ servers: stack.natsUrl, name: 'bench-agents' });
  const js = jetstream(nc);
  const h = headers();
  h.set('Content-Encoding', 'gzip');
  const publishedAt = new Map<number, number>();
  let publishCpuMs = 0;
  let publishRetries = 0;
  let publishFailures = 0;
  const publish = async (variant: number, cluster: number) => {
    const cpu = performance.now();
    const payload = body(variant, cluster, new Date());
    publishCpuMs += performance.now() - cpu;
    const at = Date.now();
    const subject = `proxima.bench.production.${agentOf(cluster)}.kubernetes`;
    // As an agent does: a publish whose ack does not come in time is sent
    // again under the same message id (the stream keeps one copy).
    const msgID = `${cluster}-${at}`;
    for (let attempt = 1; ; attempt++) {
      try {
        const ack = await js.publish(subject, payload, {
          headers: h,
          msgID,
          timeout: 30_000,
        });
        publishedAt.set(ack.seq, at);
        return;
      } catch (error) {
        publishRetries++;
        if (attempt === 3) {
          publishFailures++;
          console.error(`publish for cluster ${cluster} failed: ${error}`);
          return;
        }
      }
    }
  };

  console.log(
    `first sync of ${CLUSTERS} ${SIZE} clusters (${(Buffer.byteLength(variants[0] as string) / 1e6).toFixed(1)} MB JSON each)`,
  );
  const firstStart = Date.now();
  for (let i = 0; i < CLUSTERS; i++) await publish(0, i);
  while (processed.length < CLUSTERS) await sleep(200);
  console.log(
    `  all applied in ${((Date.now() - firstStart) / 1000).toFixed(1)} s`,
  );

  console.log(
    `steady state: each cluster every ${INTERVAL_S} s, ${CHANGE_FRACTION * 100}% of rows changed, for ${DURATION_S} s`,
  );
  const steadyFrom = processed.length;
  const cpuBefore = process.cpuUsage();
  const postgresBefore = await postgresCpuMs(stack.database.db);
  publishCpuMs = 0;
  const start = Date.now();
  const gap = (INTERVAL_S * 1000) / CLUSTERS;
  let sent = 0;
  const inFlight: Promise<void>[] = [];
  while (Date.now() - start < DURATION_S * 1000) {
    const due = start + sent * gap;
    if (due > Date.now()) await sleep(due - Date.now());
    const cluster = sent % CLUSTERS;
    const round = Math.floor(sent / CLUSTERS);
    inFlight.push(publish(1 + (round % (VARIANTS - 1)), cluster));
    sent++;
  }
  await Promise.all(inFlight);
  const publishedUntil = Date.now();
  // Drain: what was published is committed (or given up after a minute).
  const drainBy = Date.now() + 60_000;
  while (processed.length - steadyFrom < sent && Date.now() < drainBy) {
    await sleep(200);
  }
  const wallMs = Date.now() - start;
  const cpu = process.cpuUsage(cpuBefore);
  const postgresAfter = await postgresCpuMs(stack.database.db);

  const steady = processed
    .slice(steadyFrom)
    .filter((p) => p.outcome === 'applied');
  const latency: number[] = [];
  const bridge: number[] = [];
  const queue: number[] = [];
  const decode: number[] = [];
  const validation: number[] = [];
  const database: number[] = [];
  for (const p of steady) {
    const published = publishedAt.get(p.streamSeq ?? -1);
    const forwarded = sentAt.get(p.streamSeq ?? -1);
    if (published === undefined || forwarded === undefined) continue;
    latency.push(p.finishedAt - published);
    bridge.push(forwarded - published);
    queue.push(p.startedAt - forwarded);
    decode.push(p.decodeMs);
    validation.push(p.validationMs);
    database.push(p.syncMs - p.validationMs);
  }
  if (latency.length === 0) {
    console.log(
      `\npublished ${sent} resyncs (publishes retried ${publishRetries}, given up ${publishFailures}); none was applied and traced inside the ${DURATION_S} s window: the offered load is beyond what this machine carries, so there are no steady-state figures`,
    );
    await nc.close();
    await stack.stop();
    return;
  }
  const worker = mean(decode) + mean(validation) + mean(database);
  const perResync = (total: number) => total / Math.max(steady.length, 1);
  const decodeCpu = mean(decode);
  const validationCpu = mean(validation);
  const processCpu = perResync((cpu.user + cpu.system) / 1000);
  const restCpu =
    processCpu - decodeCpu - validationCpu - perResync(publishCpuMs);
  const postgresCpu =
    postgresBefore === undefined || postgresAfter === undefined
      ? undefined
      : perResync(postgresAfter - postgresBefore);
  const row = (name: string, v: number[]) =>
    `  ${name.padEnd(34)} p50 ${ms(median(v)).padStart(8)}  p99 ${ms(percentile(v, 99)).padStart(8)}  mean ${ms(mean(v)).padStart(8)}`;
  const cpuMs = (cpu.user + cpu.system) / 1000;
  console.log(
    [
      '',
      `published ${sent} resyncs in ${((publishedUntil - start) / 1000).toFixed(1)} s; applied ${steady.length} (other outcomes ${processed.length - steadyFrom - steady.length})`,
      `publishes retried ${publishRetries}, given up ${publishFailures}`,
      `resyncs per second               ${((steady.length / wallMs) * 1000).toFixed(2)} (offered ${(CLUSTERS / INTERVAL_S).toFixed(2)})`,
      row('publish → commit', latency),
      'where a resync went (wall time):',
      row('bridge (publish → SQS ok)', bridge),
      row('queue (SQS ok → handler)', queue),
      row('decode and parse (envelope)', decode),
      row('validation (digests, changed rows)', validation),
      row('database (the rest of the sync)', database),
      'CPU per resync by stage:',
      `  decode and parse ${ms1(decodeCpu)}, validation ${ms1(validationCpu)}, database (PostgreSQL) ${postgresCpu === undefined ? 'not on this machine' : ms1(postgresCpu)}, bridge + queue + poller + sync client ${ms1(restCpu)}`,
      `this process's CPU (publisher, bridge, poller, sync): ${ms(cpuMs)} over ${ms(wallMs)} wall, ${((cpuMs / wallMs) * 100).toFixed(0)}% of one core; publisher's gzip and re-stamping ${ms(publishCpuMs)}`,
      `implied fleet: one sync worker at ${ms(worker)} a resync carries ${Math.floor((FLEET_INTERVAL_S * 1000) / Math.max(worker, 1))} clusters on a ${FLEET_INTERVAL_S / 60}-minute interval`,
    ].join('\n'),
  );

  await nc.close();
  await stack.stop();
}

const ms1 = (v: number) => `${v.toFixed(1)} ms`;

await main();
