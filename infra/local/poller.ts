/**
 * What Lambda's SQS event source mapping does, for the local stack, the
 * ingest tests and the benchmark: long-polls the FIFO queue, hands the sync
 * handler batches in the exact shape Lambda gives (records with messageId,
 * receiptHandle, body, system attributes incl. MessageGroupId and
 * SequenceNumber, messageAttributes in Lambda's camelCase), deletes the
 * records the handler did not report in `batchItemFailures`, and lets the
 * failed ones come back.
 *
 * Differences from Lambda, on purpose: a failed record is made visible again
 * after `retryDelaySeconds` instead of the whole visibility timeout, so a
 * local retry takes seconds; and one receive is split into batches of at
 * most `batchSize` handed over in order, where a failure fails the later
 * records of its group in every later batch of that receive too (as FIFO
 * partial-batch processing with `skipGroupOnError` does within one batch),
 * so a group never overtakes its own failed message and other groups go on.
 */
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSMessageAttributes,
  SQSRecord,
  SQSRecordAttributes,
} from 'aws-lambda';
import { logger } from '../../shared/observability/logger.ts';
import {
  invoke as invokeHandler,
  LOCAL_FUNCTION_NAMES,
  lambdaContext,
} from './lambda-context.ts';

export type SqsHandler = (
  event: SQSEvent,
  context: Context,
) => Promise<SQSBatchResponse | undefined>;

export interface PollerOptions {
  sqs: SQSClient;
  queueUrl: string;
  handler: SqsHandler;
  /** Concurrent receive loops (Lambda's concurrent batches). */
  concurrency?: number;
  /** Records per handler call; Lambda allows up to 10 on FIFO. */
  batchSize?: number;
  /** Long-poll wait per receive; also bounds how long stop() waits. */
  waitTimeSeconds?: number;
  /** While a batch is processed; AWS wants 6 × the function timeout. */
  visibilityTimeoutSeconds?: number;
  /** When a failed record is retried. */
  retryDelaySeconds?: number;
  /** The function's name in the Lambda context handed to the handler. */
  functionName?: string;
  /** The handler's time budget (context.getRemainingTimeInMillis). */
  functionTimeoutMs?: number;
  region?: string;
  /** Called with each batch's records just before the handler runs. */
  onBatch?: (records: readonly SQSRecord[]) => void;
}

export interface PollerStats {
  received: number;
  succeeded: number;
  failed: number;
  batches: number;
  receiveErrors: number;
  /** The last receive answered (the queue is reachable). */
  healthy: boolean;
}

export interface Poller {
  stats(): PollerStats;
  healthy(): boolean;
  /** Finishes the batches in hand, then stops receiving. */
  stop(): Promise<void>;
}

const MAX_BACKOFF_MS = 10_000;

export async function startPoller(options: PollerOptions): Promise<Poller> {
  const concurrency = options.concurrency ?? 2;
  const batchSize = Math.min(10, Math.max(1, options.batchSize ?? 5));
  const waitTimeSeconds = options.waitTimeSeconds ?? 2;
  const visibilityTimeout = options.visibilityTimeoutSeconds ?? 540;
  const retryDelay = options.retryDelaySeconds ?? 5;
  const functionName = options.functionName ?? LOCAL_FUNCTION_NAMES.sync;
  // As deployed (syncTimeoutSeconds): above the 60 s transaction bound, so a
  // batch's later records are not put back for lack of time.
  const functionTimeoutMs = options.functionTimeoutMs ?? 90_000;
  const region = options.region ?? 'us-east-1';
  const { sqs, queueUrl } = options;

  const queueArn = await lookupArn(sqs, queueUrl, region);
  const stats: PollerStats = {
    received: 0,
    succeeded: 0,
    failed: 0,
    batches: 0,
    receiveErrors: 0,
    healthy: false,
  };
  let stopping = false;

  const context = (): Context =>
    lambdaContext(functionName, { timeoutMs: functionTimeoutMs, region });

  const toRecord = (message: Message): SQSRecord => {
    const a = message.Attributes ?? {};
    const attributes: SQSRecordAttributes = {
      ApproximateReceiveCount: a.ApproximateReceiveCount ?? '1',
      SentTimestamp: a.SentTimestamp ?? String(Date.now()),
      SenderId: a.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp:
        a.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
      ...(a.SequenceNumber ? { SequenceNumber: a.SequenceNumber } : {}),
      ...(a.MessageGroupId ? { MessageGroupId: a.MessageGroupId } : {}),
      ...(a.MessageDeduplicationId
        ? { MessageDeduplicationId: a.MessageDeduplicationId }
        : {}),
    };
    const messageAttributes: SQSMessageAttributes = {};
    for (const [name, value] of Object.entries(
      message.MessageAttributes ?? {},
    )) {
      messageAttributes[name] = {
        dataType: value.DataType ?? 'String',
        ...(value.StringValue !== undefined
          ? { stringValue: value.StringValue }
          : {}),
        ...(value.BinaryValue !== undefined
          ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }
          : {}),
        stringListValues: value.StringListValues ?? [],
        binaryListValues: (value.BinaryListValues ?? []).map((b) =>
          Buffer.from(b).toString('base64'),
        ),
      };
    }
    return {
      messageId: message.MessageId ?? '',
      receiptHandle: message.ReceiptHandle ?? '',
      body: message.Body ?? '',
      attributes,
      messageAttributes,
      md5OfBody: message.MD5OfBody ?? '',
      ...(message.MD5OfMessageAttributes
        ? { md5OfMessageAttributes: message.MD5OfMessageAttributes }
        : {}),
      eventSource: 'aws:sqs',
      eventSourceARN: queueArn,
      awsRegion: region,
    };
  };

  /** Runs one batch; returns the ids that failed. */
  const invoke = async (records: SQSRecord[]): Promise<Set<string>> => {
    options.onBatch?.(records);
    stats.batches++;
    try {
      const response = await invokeHandler(
        options.handler,
        { Records: records },
        context(),
      );
      return new Set(
        (response?.batchItemFailures ?? []).map((f) => f.itemIdentifier),
      );
    } catch (error) {
      // A thrown handler fails the whole batch, as in Lambda.
      logger.warn('sync handler failed the whole batch', {
        records: records.length,
        error: error instanceof Error ? error.message : String(error),
      });
      return new Set(records.map((r) => r.messageId));
    }
  };

  const settle = async (done: SQSRecord[], failed: SQSRecord[]) => {
    stats.succeeded += done.length;
    stats.failed += failed.length;
    if (done.length > 0) {
      await withRetries('delete', () =>
        sqs.send(
          new DeleteMessageBatchCommand({
            QueueUrl: queueUrl,
            Entries: done.map((r, i) => ({
              Id: String(i),
              ReceiptHandle: r.receiptHandle,
            })),
          }),
        ),
      );
    }
    if (failed.length > 0) {
      await withRetries('change visibility', () =>
        sqs.send(
          new ChangeMessageVisibilityBatchCommand({
            QueueUrl: queueUrl,
            Entries: failed.map((r, i) => ({
              Id: String(i),
              ReceiptHandle: r.receiptHandle,
              VisibilityTimeout: retryDelay,
            })),
          }),
        ),
      );
    }
  };

  const loop = async (worker: number) => {
    let backoffMs = 250;
    while (!stopping) {
      let messages: Message[];
      try {
        const response = await sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: queueUrl,
            MaxNumberOfMessages: 10,
            WaitTimeSeconds: waitTimeSeconds,
            VisibilityTimeout: visibilityTimeout,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['All'],
            ReceiveRequestAttemptId: randomUUID(),
          }),
        );
        messages = response.Messages ?? [];
        stats.healthy = true;
        backoffMs = 250;
      } catch (error) {
        stats.receiveErrors++;
        stats.healthy = false;
        if (stopping) break;
        logger.warn('queue receive failed; retrying', {
          worker,
          retryInMs: backoffMs,
          error: error instanceof Error ? error.message : String(error),
        });
        await sleep(backoffMs);
        backoffMs = Math.min(backoffMs * 2, MAX_BACKOFF_MS);
        continue;
      }
      if (messages.length === 0) continue;
      stats.received += messages.length;
      const records = messages.map(toRecord);
      const failedGroups = new Set<string>();
      const groupOf = (r: SQSRecord) => r.attributes.MessageGroupId ?? '';
      for (let i = 0; i < records.length; i += batchSize) {
        const slice = records.slice(i, i + batchSize);
        const heldBack = slice.filter((r) => failedGroups.has(groupOf(r)));
        const batch = slice.filter((r) => !failedGroups.has(groupOf(r)));
        const failedIds = batch.length > 0 ? await invoke(batch) : new Set();
        const failed = batch.filter((r) => failedIds.has(r.messageId));
        const done = batch.filter((r) => !failedIds.has(r.messageId));
        await settle(done, [...heldBack, ...failed]);
        for (const r of failed) failedGroups.add(groupOf(r));
      }
    }
  };

  const loops = Array.from({ length: concurrency }, (_, i) => loop(i));
  logger.info('queue poller started', {
    queueUrl,
    concurrency,
    batchSize,
  });

  return {
    stats: () => ({ ...stats }),
    healthy: () => stats.healthy,
    async stop() {
      stopping = true;
      await Promise.all(loops);
      logger.info('queue poller stopped', { ...stats });
    },
  };
}

async function lookupArn(
  sqs: SQSClient,
  queueUrl: string,
  region: string,
): Promise<string> {
  try {
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['QueueArn'],
      }),
    );
    if (Attributes?.QueueArn) return Attributes.QueueArn;
  } catch {
    // Unreachable now; the ARN is only informative.
  }
  const name = queueUrl.split('/').pop() ?? 'queue';
  return `arn:aws:sqs:${region}:000000000000:${name}`;
}

/**
 * Retries a settle call through a short outage. If it still fails the
 * message simply comes back: a redelivered snapshot is a no-op.
 */
async function withRetries(what: string, fn: () => Promise<unknown>) {
  for (let attempt = 1; ; attempt++) {
    try {
      await fn();
      return;
    } catch (error) {
      if (attempt >= 5) {
        logger.warn(`queue ${what} failed; the messages will come back`, {
          error: error instanceof Error ? error.message : String(error),
        });
        return;
      }
      await sleep(200 * 2 ** attempt);
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
