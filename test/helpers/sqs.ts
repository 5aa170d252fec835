/**
 * SQS and S3 for tests: the fauxqs emulator on a free port with one FIFO
 * queue and one claim-check bucket, and SDK clients pointed at it. Tests must
 * not depend on fauxqs's gaps (one message per group per receive; any receipt
 * handle accepted), so the readers here delete what they read and loop.
 */
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { S3Client } from '@aws-sdk/client-s3';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { startFauxqs } from 'fauxqs';
import { sqsClient } from '../../shared/ingest/aws-clients.ts';

export const TEST_REGION = 'us-east-1';
const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

export interface TestSqs {
  endpoint: string;
  queueUrl: string;
  /** Where the queue moves a message after `maxReceiveCount` receives. */
  deadLetterQueueUrl: string;
  bucket: string;
  sqs: SQSClient;
  s3: S3Client;
  /** Closes the clients and the emulator. */
  stop(): Promise<void>;
}

export interface StartSqsOptions {
  /** The queue's MaximumMessageSize; SQS's own maximum by default. */
  maxMessageBytes?: number;
  /** Receives before a message moves to `deadLetterQueueUrl` (default: never). */
  maxReceiveCount?: number;
}

/** Starts fauxqs on port 0 with a FIFO queue and a claim bucket. */
export async function startSqs(
  options: StartSqsOptions = {},
): Promise<TestSqs> {
  const server = await startFauxqs({ port: 0, logger: false });
  const suffix = randomUUID().slice(0, 8);
  const dlq = server.createQueue(`inventory-dlq-${suffix}.fifo`, {
    attributes: { FifoQueue: 'true' },
  });
  const { queueUrl } = server.createQueue(`inventory-${suffix}.fifo`, {
    attributes: {
      FifoQueue: 'true',
      // The bridge sets a deduplication id per stream message; content
      // dedup would merge two identical snapshots.
      ContentBasedDeduplication: 'false',
      MaximumMessageSize: String(options.maxMessageBytes ?? 1024 * 1024),
      ...(options.maxReceiveCount === undefined
        ? {}
        : {
            RedrivePolicy: JSON.stringify({
              deadLetterTargetArn: dlq.queueArn,
              maxReceiveCount: options.maxReceiveCount,
            }),
          }),
    },
  });
  const { bucketName } = server.createBucket(`claims-${suffix}`);
  const endpoint = `http://127.0.0.1:${server.port}`;
  const sqs = createSqsClient(endpoint);
  const s3 = createS3Client(endpoint);
  return {
    endpoint,
    queueUrl,
    deadLetterQueueUrl: dlq.queueUrl,
    bucket: bucketName,
    sqs,
    s3,
    async stop() {
      sqs.destroy();
      s3.destroy();
      await server.stop();
    },
  };
}

/** Configured as the backend's own clients are (shared/ingest/aws-clients.ts). */
export function createSqsClient(endpoint: string): SQSClient {
  return sqsClient({ endpoint, region: TEST_REGION, credentials });
}

export function createS3Client(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: TEST_REGION,
    credentials,
    forcePathStyle: true,
  });
}

/**
 * Reads and deletes every message on the queue until it holds none, in the
 * order received. Call once all senders are done. Bounded by `timeoutMs`.
 */
export async function drainQueue(
  sqs: SQSClient,
  queueUrl: string,
  timeoutMs = 20_000,
): Promise<Message[]> {
  const drained: Message[] = [];
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
      }),
    );
    if (Messages.length > 0) {
      drained.push(...Messages);
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: Messages.map((m, i) => ({
            Id: String(i),
            ReceiptHandle: m.ReceiptHandle,
          })),
        }),
      );
      continue;
    }
    if ((await queueDepth(sqs, queueUrl)) === 0) return drained;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`queue not drained within ${timeoutMs} ms`);
}

/** Visible plus in-flight plus delayed messages. */
export async function queueDepth(
  sqs: SQSClient,
  queueUrl: string,
): Promise<number> {
  const { Attributes = {} } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: [
        'ApproximateNumberOfMessages',
        'ApproximateNumberOfMessagesNotVisible',
        'ApproximateNumberOfMessagesDelayed',
      ],
    }),
  );
  return (
    Number(Attributes.ApproximateNumberOfMessages ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
    Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0)
  );
}

export interface OutageSwitch {
  /** Where clients should point instead of the emulator. */
  endpoint: string;
  port: number;
  /** Refuses connections and cuts open ones: the service is unreachable. */
  cut(): Promise<void>;
  /** Listens again on the same port. */
  restore(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A TCP relay in front of the emulator, so a test can make SQS and S3
 * unreachable and bring them back on the same port with their state intact.
 */
export async function startOutageSwitch(
  targetEndpoint: string,
): Promise<OutageSwitch> {
  const target = new URL(targetEndpoint);
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    const next = createServer((client) => {
      const upstream = connect(Number(target.port), target.hostname);
      sockets.add(client);
      sockets.add(upstream);
      const close = () => {
        client.destroy();
        upstream.destroy();
        sockets.delete(client);
        sockets.delete(upstream);
      };
      client.on('error', close).on('close', close);
      upstream.on('error', close).on('close', close);
      client.pipe(upstream);
      upstream.pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => resolve());
    });
    const address = next.address();
    if (address === null || typeof address === 'string') {
      throw new Error('relay has no TCP address');
    }
    port = address.port;
    server = next;
  };

  const cut = async () => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    sockets.clear();
    if (current !== undefined) {
      await new Promise<void>((resolve) => current.close(() => resolve()));
    }
  };

  await listen();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    cut,
    restore: listen,
    stop: cut,
  };
}
