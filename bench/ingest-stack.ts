/**
 * The local stack's ingest wiring for the ingest benchmarks: a fresh
 * database, nats-server, fauxqs (SQS and S3), the bridge, the poller and
 * the real sync handler, and the bench tenant. `startBenchIngest` runs all
 * but nats-server and PostgreSQL in this process (bench/ingest-run.ts);
 * `startSteadyStack` gives the bridge and fauxqs processes of their own, so
 * each part's CPU is read apart (bench/ingest-steady.ts).
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { handler as syncHandler } from '../functions/sync/handler.ts';
import { startQueueServices } from '../infra/local/aws.ts';
import { type Ingest, startIngest } from '../infra/local/ingest.ts';
import { spawnNatsServer } from '../infra/local/nats-server.ts';
import { startPoller } from '../infra/local/poller.ts';
import {
  type SpawnedVictoriaMetrics,
  spawnVictoriaMetrics,
} from '../infra/local/victoria-metrics.ts';
import { getConfig } from '../shared/config.ts';
import { armFault } from '../shared/faults.ts';
import type { ProcessedRecord } from '../shared/ingest/process-record.ts';
import { setSyncDeps } from '../shared/ingest/sync-deps.ts';
import { seriesWrites } from '../shared/metrics/after-sync.ts';
import { seriesWriterFromConfig } from '../shared/metrics/from-config.ts';
import { traceSpan } from '../shared/observability/tracer.ts';
import { ensureTenant } from '../shared/tenancy/tenants.ts';
import { type BenchDatabase, benchDatabase } from './common.ts';
import type { BridgeChildConfig, ChildMessage } from './ingest-child.ts';

export { agentOf, BASE_AGENT } from './ingest-agents.ts';

export interface BenchIngest {
  database: BenchDatabase;
  environmentId: string;
  natsUrl: string;
  ingest: Ingest;
  stop(): Promise<void>;
}

export async function startBenchIngest(options: {
  concurrency: number;
  onProcessed: (info: ProcessedRecord) => void;
  afterSend: (streamSeqs: number[], at: number) => void;
}): Promise<BenchIngest> {
  const workDir = await mkdtemp(join(tmpdir(), 'bench-ingest-'));
  const database = await benchDatabase('bench_ingest');
  const nats = await spawnNatsServer({
    dataDir: join(workDir, 'nats'),
    port: 0,
  });
  const queues = await startQueueServices({
    region: 'us-east-1',
    maxMessageBytes: 1024 * 1024,
  });
  const tenant = await ensureTenant(database.db, {
    clientSlug: 'bench',
    envSlug: 'production',
  });
  // Observes each send (a handler that neither throws nor waits changes
  // nothing on the bridge's path): the time a message reached the queue.
  const disarm = armFault('bridge.after-send', ({ sent }) => {
    options.afterSend(
      sent.map((s) => s.streamSeq),
      Date.now(),
    );
  });
  const ingest = await startIngest({
    db: database.db,
    nats: { url: nats.url },
    sqs: queues.sqs,
    s3: queues.s3,
    queueUrl: queues.queueUrl,
    bucket: queues.bucket,
    maxBytes: 1024 * 1024,
    poller: { concurrency: options.concurrency, waitTimeSeconds: 1 },
    onProcessed: options.onProcessed,
  });
  return {
    database,
    environmentId: tenant.environmentId,
    natsUrl: nats.url,
    ingest,
    async stop() {
      await ingest.stop();
      disarm();
      await queues.stop();
      await nats.stop();
      await database.close();
      await rm(workDir, { recursive: true, force: true });
    },
  };
}

/** The CPU time in ms a process on this machine has used, from /proc. */
export async function processCpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10; // USER_HZ = 100
  } catch {
    return undefined;
  }
}

/** Forks a TypeScript file of this folder with an IPC channel. */
export function forkBench(file: string, args: string[] = []): ChildProcess {
  // BENCH_CPU_PROF_DIR: each child writes a CPU profile there as it exits.
  const profileDir = process.env.BENCH_CPU_PROF_DIR;
  return fork(new URL(file, import.meta.url), args, {
    execArgv: [
      '--import',
      'tsx',
      ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}

/** The next message of `child` that `accept` takes; fails if it exits first. */
export function nextMessage<T>(
  child: ChildProcess,
  accept: (message: T) => boolean,
): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: unknown) => {
      if (!accept(message as T)) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message as T);
    };
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`child process exited (${code}) before answering`));
    };
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** The processes of the split stack whose CPU is read apart. */
export interface StackPids {
  /** This process: the poller and the sync handler (the sync worker). */
  worker: number;
  bridge: number;
  nats: number;
  emulator: number;
  /** VictoriaMetrics, the series store; -1 when not on this machine. */
  metrics: number;
}

export interface SteadyStack {
  database: BenchDatabase;
  environmentId: string;
  natsUrl: string;
  /** The emulator's S3, and the claim-check bucket. */
  s3: S3Client;
  bucket: string;
  pids: StackPids;
  stop(): Promise<Record<string, unknown> | undefined>;
}

/**
 * The local stack with each part in its own process, as deployed: the
 * bridge (a child process, as its ECS service is), the sync worker (this
 * process: the poller feeding the real sync handler), nats-server, and
 * fauxqs (a child process: the queue's and the claim-check store's work is
 * AWS's, not the backend's). Each one's CPU is then read from /proc.
 */
export async function startSteadyStack(options: {
  concurrency: number;
  /** Also write each sync's series to a VictoriaMetrics of its own. */
  series: boolean;
  onProcessed: (info: ProcessedRecord) => void;
  afterSend: (streamSeqs: number[], at: number) => void;
}): Promise<SteadyStack> {
  const maxBytes = 1024 * 1024;
  const workDir = await mkdtemp(join(tmpdir(), 'bench-ingest-'));
  const children: ChildProcess[] = [];
  const cleanup = async () => {
    for (const child of children) {
      if (child.exitCode === null) child.kill();
    }
    await rm(workDir, { recursive: true, force: true });
  };
  const database = await benchDatabase('bench_ingest');
  let stopMetrics = async () => {};
  const nats = await spawnNatsServer({
    dataDir: join(workDir, 'nats'),
    port: 0,
  });
  try {
    const emulator = forkBench('./ingest-child.ts', ['emulator']);
    children.push(emulator);
    const ready = await nextMessage<ChildMessage>(
      emulator,
      (m) => m.type === 'ready',
    );
    const port = ready.type === 'ready' ? ready.port : undefined;
    if (port === undefined) throw new Error('the emulator named no port');
    const endpoint = `http://127.0.0.1:${port}`;
    // The emulator takes any credentials; the SDK, given endpoints, reads
    // them from the environment (these stay inside this benchmark).
    process.env.AWS_ACCESS_KEY_ID = 'local';
    process.env.AWS_SECRET_ACCESS_KEY = 'local';
    const queues = await startQueueServices({
      region: 'us-east-1',
      sqsEndpoint: endpoint,
      s3Endpoint: endpoint,
      maxMessageBytes: maxBytes,
    });
    const tenant = await ensureTenant(database.db, {
      clientSlug: 'bench',
      envSlug: 'production',
    });
    const config: BridgeChildConfig = {
      natsUrl: nats.url,
      endpoint,
      queueUrl: queues.queueUrl,
      bucket: queues.bucket,
      maxBytes,
      databaseUrl: database.url,
    };
    const bridge = forkBench('./ingest-child.ts', [
      'bridge',
      JSON.stringify(config),
    ]);
    children.push(bridge);
    bridge.on('message', (m: ChildMessage) => {
      if (m.type === 'sent') options.afterSend(m.seqs, m.at);
    });
    await nextMessage<ChildMessage>(bridge, (m) => m.type === 'ready');

    // With `series`, as the local stack does with VictoriaMetrics
    // installed: each sync's series written after its commit (the store's
    // CPU is not the backend's; the worker's deriving and sending is).
    let victoria: SpawnedVictoriaMetrics | undefined;
    if (options.series) {
      victoria = await spawnVictoriaMetrics({
        dataDir: join(workDir, 'victoria-metrics'),
        port: 0,
        retentionPeriod: '31d',
      });
    }
    if (victoria)
      stopMetrics = () => (victoria as SpawnedVictoriaMetrics).stop();
    setSyncDeps({
      db: database.db,
      s3: queues.s3,
      timeoutMs: 60_000,
      eventRetentionHours: 24,
      span: traceSpan,
      seriesWrites: seriesWrites(
        victoria &&
          seriesWriterFromConfig({ ...getConfig(), METRICS_URL: victoria.url }),
      ),
      onProcessed: options.onProcessed,
    });
    const poller = await startPoller({
      sqs: queues.sqs,
      queueUrl: queues.queueUrl,
      handler: syncHandler,
      concurrency: options.concurrency,
      waitTimeSeconds: 1,
    });
    return {
      database,
      environmentId: tenant.environmentId,
      natsUrl: nats.url,
      s3: queues.s3,
      bucket: queues.bucket,
      pids: {
        worker: process.pid,
        bridge: bridge.pid ?? -1,
        nats: nats.pid,
        emulator: emulator.pid ?? -1,
        metrics: victoria?.pid ?? -1,
      },
      async stop() {
        const stopped = nextMessage<ChildMessage>(
          bridge,
          (m) => m.type === 'stopped',
        ).catch(() => undefined);
        bridge.send({ type: 'stop' });
        const bridgeStats = await stopped;
        await poller.stop();
        setSyncDeps(undefined);
        await queues.stop();
        emulator.send({ type: 'stop' });
        await stopMetrics();
        await nats.stop();
        await database.close();
        await cleanup();
        return bridgeStats?.type === 'stopped' ? bridgeStats.stats : undefined;
      },
    };
  } catch (error) {
    await stopMetrics();
    await nats.stop();
    await database.close();
    await cleanup();
    throw error;
  }
}
