/**
 * SQS and S3 for the local stack and the benchmark: the real AWS SDK clients,
 * pointed at SQS_ENDPOINT / S3_ENDPOINT when set, else at fauxqs started in
 * this process. The FIFO queue and the claim-check bucket are created when
 * missing (QUEUE_URL and CLAIM_BUCKET name existing ones).
 */
import {
  CreateBucketCommand,
  HeadBucketCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import {
  CreateQueueCommand,
  GetQueueAttributesCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { sqsClient } from '../../shared/ingest/aws-clients.ts';
import { QueueJournal } from './queue-journal.ts';

export const DEFAULT_QUEUE_NAME = 'k8s-inventory.fifo';
export const DEFAULT_DLQ_NAME = 'k8s-inventory-dlq.fifo';
export const DEFAULT_BUCKET = 'k8s-inventory-claims';

export interface QueueServicesOptions {
  region: string;
  sqsEndpoint?: string | undefined;
  s3Endpoint?: string | undefined;
  queueUrl?: string | undefined;
  bucket?: string | undefined;
  /** The queue's MaximumMessageSize when it is created here. */
  maxMessageBytes: number;
  /** The queue's visibility timeout when it is created here (6 × the sync's 60 s). */
  visibilityTimeoutSeconds?: number;
  /**
   * When the queue is created here: receives before a message moves to the
   * dead-letter queue created beside it, as in AWS.
   */
  maxReceiveCount?: number;
  /**
   * With the in-process emulator only: where accepted messages are kept on
   * disk until the sync deletes them, so a killed stack loses none
   * (queue-journal.ts). Without it the emulated queue lives in memory.
   */
  journalDir?: string | undefined;
}

export interface QueueServices {
  sqs: SQSClient;
  s3: S3Client;
  queueUrl: string;
  bucket: string;
  /** Where the emulator listens; undefined when real endpoints are used. */
  emulatorEndpoint: string | undefined;
  /** The dead-letter queue, when the queue was created here with one. */
  deadLetterQueueUrl: string | undefined;
  stop(): Promise<void>;
}

const EMULATOR_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

export async function startQueueServices(
  options: QueueServicesOptions,
): Promise<QueueServices> {
  let stopEmulator: (() => Promise<void>) | undefined;
  let sqsEndpoint = options.sqsEndpoint;
  let s3Endpoint = options.s3Endpoint;
  let emulatorEndpoint: string | undefined;
  if (sqsEndpoint === undefined || s3Endpoint === undefined) {
    const { startFauxqs } = await import('fauxqs');
    const server = await startFauxqs({
      port: 0,
      host: '127.0.0.1',
      logger: false,
    });
    emulatorEndpoint = `http://127.0.0.1:${server.port}`;
    sqsEndpoint ??= emulatorEndpoint;
    s3Endpoint ??= emulatorEndpoint;
    stopEmulator = () => server.stop();
  }
  // An emulator takes any credentials; real endpoints use the default chain.
  const credentials =
    emulatorEndpoint !== undefined ? { credentials: EMULATOR_CREDENTIALS } : {};
  const sqs = sqsClient({
    region: options.region,
    endpoint: sqsEndpoint,
    ...(sqsEndpoint === emulatorEndpoint ? credentials : {}),
  });
  const s3 = new S3Client({
    region: options.region,
    endpoint: s3Endpoint,
    forcePathStyle: true,
    ...(s3Endpoint === emulatorEndpoint ? credentials : {}),
  });
  try {
    const deadLetter =
      options.queueUrl === undefined && options.maxReceiveCount !== undefined
        ? await createDeadLetterQueue(sqs, options.maxReceiveCount)
        : undefined;
    const queueUrl =
      options.queueUrl ??
      (
        await sqs.send(
          new CreateQueueCommand({
            QueueName: DEFAULT_QUEUE_NAME,
            Attributes: {
              FifoQueue: 'true',
              // Each stream message has its own dedup id; content-based
              // dedup would merge two identical snapshots.
              ContentBasedDeduplication: 'false',
              MaximumMessageSize: String(options.maxMessageBytes),
              VisibilityTimeout: String(
                options.visibilityTimeoutSeconds ?? 360,
              ),
              ...(deadLetter
                ? { RedrivePolicy: deadLetter.redrivePolicy }
                : {}),
            },
          }),
        )
      ).QueueUrl;
    if (!queueUrl) throw new Error('CreateQueue returned no QueueUrl');
    const bucket = options.bucket ?? DEFAULT_BUCKET;
    await ensureBucket(s3, bucket);
    if (options.journalDir !== undefined && emulatorEndpoint !== undefined) {
      await new QueueJournal({
        dir: options.journalDir,
        queueUrl,
        deadLetterQueueUrl: deadLetter?.queueUrl,
        maxReceiveCount: options.maxReceiveCount,
      }).attach(sqs, s3);
    }
    return {
      sqs,
      s3,
      queueUrl,
      bucket,
      emulatorEndpoint,
      deadLetterQueueUrl: deadLetter?.queueUrl,
      async stop() {
        sqs.destroy();
        s3.destroy();
        await stopEmulator?.();
      },
    };
  } catch (error) {
    sqs.destroy();
    s3.destroy();
    await stopEmulator?.();
    throw error;
  }
}

/** The FIFO dead-letter queue, and the redrive policy that sends to it. */
async function createDeadLetterQueue(
  sqs: SQSClient,
  maxReceiveCount: number,
): Promise<{ queueUrl: string; redrivePolicy: string }> {
  const { QueueUrl } = await sqs.send(
    new CreateQueueCommand({
      QueueName: DEFAULT_DLQ_NAME,
      // 14 days, as in AWS.
      Attributes: { FifoQueue: 'true', MessageRetentionPeriod: '1209600' },
    }),
  );
  if (!QueueUrl) throw new Error('CreateQueue returned no QueueUrl');
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl,
      AttributeNames: ['QueueArn'],
    }),
  );
  const arn = Attributes?.QueueArn;
  if (!arn) throw new Error('the dead-letter queue has no QueueArn');
  return {
    queueUrl: QueueUrl,
    redrivePolicy: JSON.stringify({
      deadLetterTargetArn: arn,
      maxReceiveCount,
    }),
  };
}

async function ensureBucket(s3: S3Client, bucket: string): Promise<void> {
  try {
    await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    return;
  } catch {
    // Missing (or not visible): try to create it.
  }
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name !== 'BucketAlreadyOwnedByYou' && name !== 'BucketAlreadyExists') {
      throw error;
    }
  }
}
