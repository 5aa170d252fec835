/**
 * The local stack's ingest wiring for the ingest benchmarks: a fresh
 * database, nats-server, fauxqs (SQS and S3), the bridge, the poller and
 * the real sync handler, and the bench tenant.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startQueueServices } from '../infra/local/aws.ts';
import { type Ingest, startIngest } from '../infra/local/ingest.ts';
import { armFault } from '../shared/faults.ts';
import { spawnNatsServer } from '../shared/ingest/nats-server.ts';
import type { ProcessedRecord } from '../shared/ingest/process-record.ts';
import { ensureTenant } from '../shared/tenancy/tenants.ts';
import { type BenchDatabase, benchDatabase } from './common.ts';

export const BASE_AGENT = '00000000-0000-4000-8000-000000000000';
export const agentOf = (i: number) =>
  `00000000-0000-4000-8000-${String(i + 1).padStart(12, '0')}`;

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
