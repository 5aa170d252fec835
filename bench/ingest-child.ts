/**
 * The steady ingest benchmark's helper processes (bench/ingest-stack.ts
 * forks them), so that the CPU of what is not the sync worker is neither
 * counted as the worker's nor taken from it:
 *
 * - `emulator`: fauxqs, the SQS and S3 emulator (AWS's work, not ours);
 *   answers `{ type: 'ready', port }`;
 * - `bridge CONFIG`: the real bridge (NATS JetStream → SQS FIFO), a process
 *   of its own as it is deployed (an ECS service); answers `{ type:
 *   'ready' }`, then `{ type: 'sent', seqs, at }` after each SQS send (the
 *   time a message reached the queue), and `{ type: 'stopped', stats }`
 *   once asked to `stop`.
 *
 * Either exits when its parent goes away.
 */
import { startQueueServices } from '../infra/local/aws.ts';
import { createPool } from '../shared/db/pool.ts';
import { armFault } from '../shared/faults.ts';
// Not from infra/local/ingest.ts: that loads the sync handler and with it
// X-Ray's async hooks, which the deployed bridge does not run.
import {
  Bridge,
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
} from '../shared/ingest/bridge/index.ts';
import { bridgeRejectionRecorder } from '../shared/ingest/rejections.ts';

export interface BridgeChildConfig {
  natsUrl: string;
  endpoint: string;
  queueUrl: string;
  bucket: string;
  maxBytes: number;
  databaseUrl: string;
}

export type ChildMessage =
  | { type: 'ready'; port?: number }
  | { type: 'sent'; seqs: number[]; at: number }
  | { type: 'stopped'; stats: Record<string, unknown> };

const send = (message: ChildMessage) => process.send?.(message);

async function emulator() {
  const { startFauxqs } = await import('fauxqs');
  const server = await startFauxqs({
    port: 0,
    host: '127.0.0.1',
    logger: false,
  });
  process.on('message', async (m: { type?: string }) => {
    if (m.type !== 'stop') return;
    await server.stop();
    process.exit(0);
  });
  send({ type: 'ready', port: server.port });
}

async function bridge(config: BridgeChildConfig) {
  const queues = await startQueueServices({
    region: 'us-east-1',
    sqsEndpoint: config.endpoint,
    s3Endpoint: config.endpoint,
    queueUrl: config.queueUrl,
    bucket: config.bucket,
    maxMessageBytes: config.maxBytes,
  });
  const db = createPool({ connectionString: config.databaseUrl, max: 2 });
  // A handler that neither throws nor waits changes nothing on the path.
  armFault('bridge.after-send', ({ sent }) => {
    send({ type: 'sent', seqs: sent.map((s) => s.streamSeq), at: Date.now() });
  });
  const bridge = new Bridge({
    nats: { url: config.natsUrl },
    stream: DEFAULT_STREAM,
    consumer: DEFAULT_CONSUMER,
    subjectFilter: DEFAULT_SUBJECT_FILTER,
    createStream: true,
    sqs: queues.sqs,
    s3: queues.s3,
    queueUrl: queues.queueUrl,
    bucket: queues.bucket,
    maxBytes: config.maxBytes,
    onReject: bridgeRejectionRecorder(() => db),
  });
  await bridge.start();
  process.on('message', async (m: { type?: string }) => {
    if (m.type !== 'stop') return;
    await bridge.stop();
    send({ type: 'stopped', stats: { ...bridge.stats() } });
    await queues.stop();
    await db.end();
    process.exit(0);
  });
  send({ type: 'ready' });
}

process.on('disconnect', () => process.exit(0));
const [role, config] = process.argv.slice(2);
if (role === 'emulator') await emulator();
else if (role === 'bridge' && config !== undefined) {
  await bridge(JSON.parse(config) as BridgeChildConfig);
} else {
  console.error('usage: ingest-child.ts emulator | bridge CONFIG_JSON');
  process.exit(2);
}
