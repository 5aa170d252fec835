/**
 * `npm run bench -- ingest --steady [--duration=180] [--rate=15] [--series]`: the
 * steady state of ingest through the local stack (NATS → bridge → queue →
 * sync). BENCH_CLUSTERS (200) medium clusters are first synced once; then,
 * for --duration seconds, they resync at --rate resyncs a second in all
 * (each cluster every BENCH_CLUSTERS / rate seconds, spread evenly), each
 * with 1% of its rows changed and every running pod's usage moved, as
 * metrics-server's figures do (mutateInventory). The default rate is the
 * issue's target, 15 a second: the p99 then tells whether the stack carries
 * it; a rate above what the stack settles shows its capacity instead (and
 * its latencies are the backlog's).
 *
 * Each part runs in its own process, so its CPU is read apart (/proc): the
 * agents (bench/ingest-publisher.ts: pre-generated variants, gzip members
 * compressed once, only the re-stamped head per publish), nats-server, the
 * bridge and fauxqs (bench/ingest-child.ts), PostgreSQL, with `--series`
 * VictoriaMetrics (each sync's series written after its commit, as the
 * local stack does when it is installed), and this process, the sync
 * worker (the poller feeding the real sync handler, and its series writes).
 *
 * Prints resyncs per second, publish-to-commit p50/p99, where each resync's
 * wall time went (bridge, queue wait, decode and parse, validation, the
 * database), the CPU per resync by stage, and the implied fleet size: how
 * many clusters one sync worker carries on the spec's 5-minute interval. A
 * sync worker is one Lambda instance, one record at a time: just before the
 * window, one more cluster's resyncs go through the sync handler one after
 * the other, nothing else running, and their median wall time sets the
 * fleet; the window's own figures, at several concurrent batches sharing
 * two cores with the whole stack, are printed beside it.
 *
 * The CPU by stage: the bridge's and PostgreSQL's are their processes'; the
 * validation is the sync's own measure of that synchronous step; decode and
 * parse (the queued record read back, gunzip, JSON.parse and the envelope)
 * is measured just before the window on a steady body as queued, one at a
 * time, while the queue is empty (in the window, records overlap and its
 * wall time holds others' work);
 * the rest of the worker's CPU is the sync's client side of the database,
 * the poller and the SQS client. The worker's and PostgreSQL's CPU is per
 * record settled in the window, the bridge's per message it forwarded. The
 * agents', nats-server's and the queue emulator's are printed apart, per
 * message published: they are not the backend's.
 */
import { readFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSRecord } from 'aws-lambda';
import { handler as syncHandler } from '../functions/sync/handler.ts';
import { lambdaContext } from '../infra/local/lambda-context.ts';
import type { ProcessedRecord } from '../shared/ingest/process-record.ts';
import {
  decodeQueuedInventory,
  encodeForQueue,
  toQueuedRecord,
} from '../shared/ingest/queue-message.ts';
import { decodeInventoryJson } from '../shared/wire/decode.ts';
import { mean, median, percentile, postgresCpuMs } from './common.ts';
import {
  type DiskSample,
  diskSample,
  diskSpent,
  settleAfterFirstSync,
} from './disk.ts';
import { agentOf } from './ingest-agents.ts';
import type { PublisherConfig, PublisherMessage } from './ingest-publisher.ts';
import {
  forkBench,
  nextMessage,
  processCpuMs,
  type SteadyStack,
  startSteadyStack,
} from './ingest-stack.ts';
import { type Figure, round, writeResults } from './results.ts';

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: {
    steady: { type: 'boolean', default: false },
    series: { type: 'boolean', default: false },
    duration: { type: 'string', default: '180' },
    rate: { type: 'string', default: '15' },
  },
});
const DURATION_S = Number(values.duration);
const RATE = Number(values.rate);
if (!(DURATION_S > 0) || !(RATE > 0)) {
  throw new Error(
    '--duration (seconds) and --rate (resyncs a second) are above 0',
  );
}
const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 200);
const INTERVAL_S = CLUSTERS / RATE;
const SIZE = (process.env.BENCH_SIZE ?? 'medium') as PublisherConfig['size'];
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const VARIANTS = 8;
const CHANGE_FRACTION = 0.01;
const FLEET_INTERVAL_S = 300;
const CALIBRATION_RUNS = 10;
/** Published → queryable, p99: the freshness objective. */
const FRESHNESS_P99_MS = 5_000;
/** The steady rate the system is built to carry. */
const STEADY_RATE_TARGET = 15;
const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;

const ms = (v: number) => `${Math.round(v)} ms`;
const ms1 = (v: number) => `${v.toFixed(1)} ms`;
const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(', ');

/** CPU ms of each process, read at one moment. */
interface CpuSample {
  worker: number;
  /** This process's main thread: ns on a core, ns runnable but waiting for one. */
  mainThread: { runNs: number; waitNs: number } | undefined;
  bridge: number | undefined;
  nats: number | undefined;
  emulator: number | undefined;
  metrics: number | undefined;
  publisher: number | undefined;
  postgres: number | undefined;
}

async function sampleCpu(
  stack: SteadyStack,
  publisherPid: number,
): Promise<CpuSample> {
  const own = process.cpuUsage();
  return {
    worker: (own.user + own.system) / 1000,
    mainThread: await schedstat(process.pid),
    bridge: await processCpuMs(stack.pids.bridge),
    nats: await processCpuMs(stack.pids.nats),
    emulator: await processCpuMs(stack.pids.emulator),
    metrics: await processCpuMs(stack.pids.metrics),
    publisher: await processCpuMs(publisherPid),
    postgres: await postgresCpuMs(stack.database.db),
  };
}

/** A thread's time on a core and waiting for one (/proc schedstat). */
async function schedstat(pid: number) {
  try {
    const text = await readFile(`/proc/${pid}/task/${pid}/schedstat`, 'utf8');
    const [run, wait] = text.trim().split(' ').map(Number);
    if (!Number.isFinite(run) || !Number.isFinite(wait)) return undefined;
    return { runNs: run as number, waitNs: wait as number };
  } catch {
    return undefined;
  }
}

const spent = (
  before: CpuSample,
  after: CpuSample,
  key: Exclude<keyof CpuSample, 'mainThread'>,
): number | undefined => {
  const a = before[key];
  const b = after[key];
  return a === undefined || b === undefined ? undefined : b - a;
};

/**
 * Decode and parse CPU of one steady body as the bridge queues it (inline
 * or by claim check), one at a time, averaged over CALIBRATION_RUNS.
 */
async function decodeCpuMs(stack: SteadyStack, body: Buffer) {
  const encoded = encodeForQueue({
    subject: `proxima.bench.production.${agentOf(0)}.kubernetes`,
    streamSeq: 1,
    body,
    contentEncoding: 'gzip',
    maxBytes: 1024 * 1024,
    bucket: stack.bucket,
    scope: 'calibration',
  });
  if (encoded.kind === 'claim-check') {
    await stack.s3.send(
      new PutObjectCommand({
        Bucket: encoded.claim.bucket,
        Key: encoded.claim.key,
        Body: encoded.claim.body,
      }),
    );
  }
  const record = toQueuedRecord({
    Body: encoded.message.body,
    MessageAttributes: encoded.message.attributes,
  });
  const once = async () => {
    const queued = await decodeQueuedInventory(record, stack.s3);
    decodeInventoryJson(queued.json);
  };
  await once(); // warm
  const before = process.cpuUsage();
  const wallFrom = performance.now();
  for (let i = 0; i < CALIBRATION_RUNS; i++) await once();
  const cpu = process.cpuUsage(before);
  return {
    cpuMs: (cpu.user + cpu.system) / 1000 / CALIBRATION_RUNS,
    wallMs: (performance.now() - wallFrom) / CALIBRATION_RUNS,
    kind: encoded.kind,
  };
}

/**
 * One sync worker alone, as a Lambda instance runs: one record at a time
 * through the real sync handler, nothing queued behind it and nothing else
 * of the stack running. The first body is the cluster's first sync; each
 * later one a resync of a changed variant. Per resync: the wall time, the
 * worker's CPU and PostgreSQL's.
 */
async function aloneWorker(stack: SteadyStack, bodies: readonly Buffer[]) {
  const records = bodies.map((body, i): SQSRecord => {
    const encoded = encodeForQueue({
      subject: `proxima.bench.production.${agentOf(CLUSTERS)}.kubernetes`,
      streamSeq: 1 + i,
      body,
      contentEncoding: 'gzip',
      maxBytes: 1024 * 1024,
      bucket: stack.bucket,
      scope: 'alone',
    });
    if (encoded.kind !== 'inline') {
      throw new Error('a steady body goes inline; this one did not');
    }
    const queued = toQueuedRecord({
      Body: encoded.message.body,
      MessageAttributes: encoded.message.attributes,
    });
    return {
      messageId: `alone-${i}`,
      receiptHandle: `alone-${i}`,
      body: queued.body,
      messageAttributes: queued.messageAttributes ?? {},
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'bench',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
        MessageGroupId: `alone-${CLUSTERS}`,
        MessageDeduplicationId: `alone-${i}`,
        SequenceNumber: String(1 + i),
      },
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:bench',
      awsRegion: 'us-east-1',
    };
  });
  const run = async (record: SQSRecord) => {
    const response = await syncHandler(
      { Records: [record] },
      lambdaContext('sync'),
    );
    if (response.batchItemFailures.length > 0) {
      throw new Error(`the worker alone failed ${record.messageId}`);
    }
  };
  const [first, ...resyncs] = records;
  if (first === undefined || resyncs.length === 0) {
    throw new Error('no bodies for the worker alone');
  }
  await run(first);
  const walls: number[] = [];
  const diskFrom = await diskSample(stack.database.db);
  const cpuFrom = process.cpuUsage();
  const postgresFrom = await postgresCpuMs(stack.database.db);
  for (const record of resyncs) {
    const started = performance.now();
    await run(record);
    walls.push(performance.now() - started);
  }
  const cpu = process.cpuUsage(cpuFrom);
  const postgresTo = await postgresCpuMs(stack.database.db);
  const disk = diskSpent(
    diskFrom,
    await diskSample(stack.database.db),
    resyncs.length,
  );
  return {
    walls,
    disk,
    workerCpuMs: (cpu.user + cpu.system) / 1000 / resyncs.length,
    postgresCpuMs:
      postgresFrom === undefined || postgresTo === undefined
        ? undefined
        : (postgresTo - postgresFrom) / resyncs.length,
  };
}

async function main() {
  const sentAt = new Map<number, number>();
  const processed: ProcessedRecord[] = [];
  const stack = await startSteadyStack({
    concurrency: CONCURRENCY,
    series: values.series,
    afterSend: (seqs, at) => {
      for (const seq of seqs) sentAt.set(seq, at);
    },
    onProcessed: (info) => processed.push(info),
  });

  const config: PublisherConfig = {
    natsUrl: stack.natsUrl,
    clusters: CLUSTERS,
    size: SIZE,
    variants: VARIANTS,
    changeFraction: CHANGE_FRACTION,
    intervalS: INTERVAL_S,
    durationS: DURATION_S,
  };
  const publisher = forkBench('./ingest-publisher.ts', [
    JSON.stringify(config),
  ]);
  const publishedAt = new Map<number, number>();
  publisher.on('message', (m: PublisherMessage) => {
    if (m.type === 'published') publishedAt.set(m.seq, m.at);
  });
  const stop = async () => {
    publisher.send({ type: 'stop' });
    return stack.stop();
  };
  const ready = await nextMessage<PublisherMessage>(
    publisher,
    (m) => m.type === 'ready',
  );
  if (ready.type !== 'ready') throw new Error('unreachable');
  const sample = Buffer.from(ready.sample, 'base64');

  console.log(
    `first sync of ${CLUSTERS} ${SIZE} clusters (${(ready.jsonBytes / 1e6).toFixed(1)} MB JSON each, ${(ready.wireBytes / 1e6).toFixed(2)} MB gzip on the wire: a ${ready.headBytes}-byte head compressed per publish, the rest once), ${CONCURRENCY} concurrent handler batches, ${values.series ? "each sync's series written to VictoriaMetrics" : 'no series written (--series writes them)'}`,
  );
  const firstStart = Date.now();
  const firstDone = nextMessage<PublisherMessage>(
    publisher,
    (m) => m.type === 'first-done',
  );
  publisher.send({ type: 'first' });
  await firstDone;
  while (processed.length < CLUSTERS) await sleep(200);
  const firstApplied = processed.filter((p) => p.outcome === 'applied').length;
  console.log(
    `  all settled in ${((Date.now() - firstStart) / 1000).toFixed(1)} s (applied ${firstApplied})`,
  );

  await settleAfterFirstSync(stack.database.db);
  // Before the window, while the queue is empty and nothing else runs here.
  const calibration = await decodeCpuMs(stack, sample);
  const alone = await aloneWorker(
    stack,
    ready.alone.map((b) => Buffer.from(b, 'base64')),
  );
  console.log(
    `steady state: ${RATE} resyncs a second, each cluster every ${INTERVAL_S.toFixed(1)} s, ${CHANGE_FRACTION * 100}% of rows changed, for ${DURATION_S} s; load average ${load()} (1, 5, 15 min)`,
  );
  const steadyFrom = processed.length;
  const diskBefore: DiskSample = await diskSample(stack.database.db);
  const before = await sampleCpu(stack, publisher.pid ?? -1);
  const start = Date.now();
  const steadyDone = nextMessage<PublisherMessage>(
    publisher,
    (m) => m.type === 'steady-done',
  );
  publisher.send({ type: 'steady' });
  const done = await steadyDone;
  if (done.type !== 'steady-done') throw new Error('unreachable');
  const { sent } = done;
  // Drain: what was published is committed (or given up after a minute).
  const drainBy = Date.now() + 60_000;
  while (processed.length - steadyFrom < sent && Date.now() < drainBy) {
    await sleep(200);
  }
  const wallMs = Date.now() - start;
  const after = await sampleCpu(stack, publisher.pid ?? -1);
  const loadAfter = load();

  const settled = processed.slice(steadyFrom);
  const windowDisk = diskSpent(
    diskBefore,
    await diskSample(stack.database.db),
    Math.max(1, settled.length),
  );
  const steady = settled.filter((p) => p.outcome === 'applied');
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
  const header = [
    '',
    `published ${sent} resyncs in ${((done.publishedUntil - done.startedAt) / 1000).toFixed(1)} s; applied ${steady.length} (other outcomes ${settled.length - steady.length}, unsettled ${Math.max(0, sent - settled.length)})`,
    `publishes retried ${done.retries}, given up ${done.failures}`,
    ...(settled.length < sent * 0.95
      ? [
          `saturated: the stack settled ${settled.length} of the ${sent} published, so the latencies below are mostly queueing behind the backlog`,
        ]
      : []),
    `load average ${loadAfter} (1, 5, 15 min) at the end; the machine is shared, so wall times hold others' load`,
  ];
  if (latency.length === 0) {
    console.log(
      [
        ...header,
        `none was applied and traced inside the ${DURATION_S} s window (and its minute of drain): the offered load is beyond what this machine carries, so there are no steady-state figures`,
      ].join('\n'),
    );
    await stop();
    return;
  }

  // Per message each process handled in the window: the worker and
  // PostgreSQL the records settled, the bridge those it forwarded, the
  // agents, nats-server and the queue emulator those published.
  const forwarded = [...sentAt.values()].filter(
    (at) => at >= start && at <= start + wallMs,
  ).length;
  const cpuOf = (
    key: Exclude<keyof CpuSample, 'mainThread'>,
    messages: number,
  ) => {
    const total = spent(before, after, key);
    return total === undefined || messages === 0 ? undefined : total / messages;
  };
  const shown = (v: number | undefined) =>
    v === undefined ? 'not read (not on this machine)' : ms1(v);
  // Validation is one synchronous step on the main thread: its wall time is
  // its CPU plus the time the thread waited for a core, which on a shared
  // machine is far from nothing; the thread's own share over the window
  // (/proc schedstat) turns the one into the other.
  const runShare =
    before.mainThread && after.mainThread
      ? (after.mainThread.runNs - before.mainThread.runNs) /
        Math.max(
          1,
          after.mainThread.runNs -
            before.mainThread.runNs +
            after.mainThread.waitNs -
            before.mainThread.waitNs,
        )
      : undefined;
  const validationCpu = mean(validation) * (runShare ?? 1);
  const workerCpu = cpuOf('worker', settled.length) ?? 0;
  const workerRest = workerCpu - calibration.cpuMs - validationCpu;
  const postgresCpu = cpuOf('postgres', settled.length);
  const bridgeCpu = cpuOf('bridge', forwarded);
  const backendCpu = workerCpu + (postgresCpu ?? 0) + (bridgeCpu ?? 0);
  const worker = mean(decode) + mean(validation) + mean(database);
  const fleet = (perResyncMs: number) =>
    Math.floor((FLEET_INTERVAL_S * 1000) / Math.max(perResyncMs, 1));
  const row = (name: string, v: number[]) =>
    `  ${name.padEnd(34)} p50 ${ms(median(v)).padStart(8)}  p99 ${ms(percentile(v, 99)).padStart(8)}  mean ${ms(mean(v)).padStart(8)}`;
  const workerCpuTotal = spent(before, after, 'worker') ?? 0;
  console.log(
    [
      ...header,
      `resyncs per second               ${((steady.length / wallMs) * 1000).toFixed(2)} (offered ${RATE.toFixed(2)}; over ${ms(wallMs)}, the window and its drain)`,
      row('publish → commit', latency),
      'where a resync went (wall time):',
      row('bridge (publish → SQS ok)', bridge),
      row('queue (SQS ok → handler)', queue),
      row('decode and parse (envelope)', decode),
      row('validation (digests, changed rows)', validation),
      row('database (the rest of the sync)', database),
      `CPU per resync by stage (${settled.length} settled in the window):`,
      `  bridge                           ${shown(bridgeCpu)} (per message forwarded: ${forwarded} in the window)`,
      `  decode and parse                 ${ms1(calibration.cpuMs)} (measured apart: ${CALIBRATION_RUNS} runs one at a time, ${calibration.kind}, ${ms1(calibration.wallMs)} wall each)`,
      `  validation                       ${ms1(validationCpu)} (${runShare === undefined ? "its wall time: the thread's wait for a core not read" : `its ${ms1(mean(validation))} wall time × ${(runShare * 100).toFixed(0)}%, the share of the worker's main thread's runnable time it was on a core`})`,
      `  database (PostgreSQL)            ${shown(postgresCpu)}`,
      `  sync worker, the rest            ${ms1(workerRest)} (its client side of the database, the poller, the SQS client${workerRest < 0 ? '; below 0: the decode measured apart is more than the window shows, so take these as noisy' : ''})`,
      `  backend in all                   ${ms1(backendCpu)} (bridge, sync worker${postgresCpu === undefined ? '; PostgreSQL not read' : ', PostgreSQL'})`,
      `  not the backend's, per message published: agents ${shown(cpuOf('publisher', sent))}, nats-server ${shown(cpuOf('nats', sent))}, queue emulator ${shown(cpuOf('emulator', sent))}${values.series ? `, VictoriaMetrics ${shown(cpuOf('metrics', settled.length))} (per record settled: its series)` : ''}`,
      `the sync worker's process: ${ms(workerCpuTotal)} CPU over ${ms(wallMs)} wall, ${((workerCpuTotal / wallMs) * 100).toFixed(0)}% of one core; the agents' process ${ms(done.cpuMs)} over the publish loop (of it making the bodies ${ms(done.bodyCpuMs)})`,
      `implied fleet: one sync worker alone (one record at a time through the sync handler, nothing queued and nothing else of the stack running, ${alone.walls.length} resyncs of one more cluster just before the window) takes p50 ${ms1(median(alone.walls))} (mean ${ms1(mean(alone.walls))}) a resync, so it carries ${fleet(median(alone.walls))} clusters on a ${FLEET_INTERVAL_S / 60}-minute interval`,
      `  its CPU a resync: the worker's ${ms1(alone.workerCpuMs)}${alone.postgresCpuMs === undefined ? '' : `, PostgreSQL's ${ms1(alone.postgresCpuMs)}`}; by CPU alone (one after the other, no waiting) ${fleet(alone.workerCpuMs + (alone.postgresCpuMs ?? 0))} clusters`,
      `  in the window, at ${CONCURRENCY} concurrent batches on this shared machine, a record took ${ms(worker)} of wall time (it holds waits for the others: ${fleet(worker)} clusters at that pace), and the worker's ${ms1(workerCpu)}${postgresCpu === undefined ? '' : ` and PostgreSQL's ${ms1(postgresCpu)}`} of CPU (${fleet(workerCpu + (postgresCpu ?? 0))} clusters)`,
      `disk per resync: WAL ${kb(windowDisk.walBytes)} in the window, ${kb(alone.disk.walBytes)} alone; tables and indexes grew ${kb(windowDisk.tableBytes)} in the window${process.env.DATABASE_URL ? " (WAL is the server's: others' writes on DATABASE_URL's server count too; unset it for an embedded server of the bench's own)" : ''}`,
    ].join('\n'),
  );

  const settledRate = (steady.length / wallMs) * 1000;
  const figures: Record<string, Figure> = {
    publish_to_commit_p99_ms: {
      value: round(percentile(latency, 99)),
      unit: 'ms',
      objective: 'Freshness: snapshot published → queryable, p99',
      target: {
        max: FRESHNESS_P99_MS,
        text: `≤ ${FRESHNESS_P99_MS / 1000} s at 15 resyncs a second`,
      },
      detail: `p50 ${ms(median(latency))}; ${CLUSTERS} ${SIZE} clusters at ${RATE}/s offered, ${CHANGE_FRACTION * 100}% changed, for ${DURATION_S} s`,
    },
    publish_to_commit_p50_ms: { value: round(median(latency)), unit: 'ms' },
    settled_per_second: {
      value: round(settledRate),
      unit: '/s',
      objective: 'Steady ingest: resyncs a second settled',
      target: {
        min: STEADY_RATE_TARGET * 0.95,
        text: `carries ${STEADY_RATE_TARGET}/s offered (settles ≥ 95%)`,
      },
      detail: `offered ${RATE}/s; publish → commit p99 ${ms(percentile(latency, 99))}`,
    },
    offered_per_second: { value: RATE, unit: '/s' },
    clusters: { value: CLUSTERS, unit: 'clusters' },
    json_bytes: { value: ready.jsonBytes, unit: 'bytes' },
    wire_bytes: { value: ready.wireBytes, unit: 'bytes' },
    worker_cpu_ms: { value: round(workerCpu), unit: 'ms' },
    decode_cpu_ms: { value: round(calibration.cpuMs), unit: 'ms' },
    validation_cpu_ms: { value: round(validationCpu), unit: 'ms' },
    backend_cpu_ms: { value: round(backendCpu), unit: 'ms' },
    alone_wall_p50_ms: { value: round(median(alone.walls)), unit: 'ms' },
    alone_wall_mean_ms: { value: round(mean(alone.walls)), unit: 'ms' },
    alone_worker_cpu_ms: { value: round(alone.workerCpuMs), unit: 'ms' },
    wal_bytes_per_resync: {
      value: Math.round(windowDisk.walBytes),
      unit: 'bytes',
    },
    alone_wal_bytes_per_resync: {
      value: Math.round(alone.disk.walBytes),
      unit: 'bytes',
    },
    table_bytes_per_resync: {
      value: Math.round(windowDisk.tableBytes),
      unit: 'bytes',
    },
    database_bytes: { value: windowDisk.databaseBytes, unit: 'bytes' },
  };
  if (postgresCpu !== undefined) {
    figures.postgres_cpu_ms = { value: round(postgresCpu), unit: 'ms' };
  }
  if (bridgeCpu !== undefined) {
    figures.bridge_cpu_ms = { value: round(bridgeCpu), unit: 'ms' };
  }
  if (alone.postgresCpuMs !== undefined) {
    figures.alone_postgres_cpu_ms = {
      value: round(alone.postgresCpuMs),
      unit: 'ms',
    };
  }
  await writeResults({
    name: 'ingest-steady',
    measures: [
      'shared/sync',
      'shared/wire',
      'shared/ingest',
      'shared/events',
      'shared/db',
      'functions/sync',
      'functions/bridge',
      'migrations',
      'bench/ingest-steady.ts',
      'bench/ingest-stack.ts',
      'bench/ingest-publisher.ts',
    ],
    figures,
    db: stack.database.db,
    notes: [
      ...(settled.length < sent * 0.95
        ? ['saturated: the latencies are queueing behind the backlog']
        : []),
      ...(process.env.DATABASE_URL
        ? [
            "WAL bytes are the server's, others' writes included (DATABASE_URL's server)",
          ]
        : []),
    ],
  });

  await stop();
}

await main();
