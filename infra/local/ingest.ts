/**
 * The ingest path outside AWS, wired once for the local stack, the ingest
 * tests and the benchmark: the real bridge (NATS JetStream → SQS FIFO, with
 * rejections kept in PostgreSQL), and the queue poller feeding the real sync
 * Lambda handler (functions/sync/handler.ts) Lambda-shaped events.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { NatsConnection } from '@nats-io/transport-node';
import { handler as syncHandler } from '../../functions/sync/handler.ts';
import { DEFAULT_EVENT_RETENTION_HOURS } from '../../shared/config.ts';
import type { Db } from '../../shared/db/pool.ts';
import {
  Bridge,
  type BridgeOptions,
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
  type NatsConnectOptions,
} from '../../shared/ingest/bridge/index.ts';
import type { ProcessedRecord } from '../../shared/ingest/process-record.ts';
import { bridgeRejectionRecorder } from '../../shared/ingest/rejections.ts';
import { setSyncDeps } from '../../shared/ingest/sync-deps.ts';
import { seriesWrites } from '../../shared/metrics/after-sync.ts';
import type { SeriesWriter } from '../../shared/metrics/writer.ts';
import { logger } from '../../shared/observability/logger.ts';
import { traceSpan } from '../../shared/observability/tracer.ts';
import { type Poller, type PollerOptions, startPoller } from './poller.ts';

export interface IngestOptions {
  /** The sync's pool (its login: the writer's). */
  db: Db;
  /** The bridge's refusal recorder's pool (its login); `db` when not given. */
  bridgeDb?: Db;
  nats: NatsConnection | NatsConnectOptions;
  sqs: SQSClient;
  s3: S3Client;
  queueUrl: string;
  bucket: string;
  /** The queue's MaximumMessageSize: bodies above it go by claim check. */
  maxBytes: number;
  stream?: string;
  consumer?: string;
  subjectFilter?: string;
  /** Create the stream and consumer when missing (local: yes). */
  createStream?: boolean;
  syncTimeoutMs?: number;
  eventRetentionHours?: number;
  /** The queue's maxReceiveCount (the sync records a record failing on its last receive). */
  maxReceives?: number;
  eventHistoryDays?: number;
  /** Bridge settings beyond the above (tests: backoff, seams). */
  bridge?: Partial<BridgeOptions>;
  /** Poller settings beyond the above (concurrency, retry delay). */
  poller?: Partial<Omit<PollerOptions, 'sqs' | 'queueUrl' | 'handler'>>;
  /** Writes each applied snapshot's series (the local metrics store). */
  seriesWriter?: SeriesWriter | undefined;
  /** Each record settled by the sync handler (benchmark timing). */
  onProcessed?: (info: ProcessedRecord) => void;
}

export interface Ingest {
  bridge: Bridge;
  poller: Poller;
  /** Bridge connected with its consumer, and the queue answering. */
  healthy(): boolean;
  /**
   * Stops the bridge, then (when `drainMs` > 0) lets the poller empty the
   * queue for up to that long, then stops the poller.
   */
  stop(options?: { drainMs?: number }): Promise<void>;
}

export { DEFAULT_CONSUMER, DEFAULT_STREAM, DEFAULT_SUBJECT_FILTER };

export async function startIngest(options: IngestOptions): Promise<Ingest> {
  const { db } = options;
  setSyncDeps({
    db,
    s3: options.s3,
    timeoutMs: options.syncTimeoutMs ?? 60_000,
    eventRetentionHours:
      options.eventRetentionHours ?? DEFAULT_EVENT_RETENTION_HOURS,
    ...(options.maxReceives === undefined
      ? {}
      : { maxReceives: options.maxReceives }),
    ...(options.eventHistoryDays
      ? { eventHistoryDays: options.eventHistoryDays }
      : {}),
    span: traceSpan,
    seriesWrites: seriesWrites(options.seriesWriter),
    ...(options.onProcessed ? { onProcessed: options.onProcessed } : {}),
  });

  const poller = await startPoller({
    sqs: options.sqs,
    queueUrl: options.queueUrl,
    handler: syncHandler,
    ...options.poller,
  });

  const bridge = new Bridge({
    nats: options.nats,
    stream: options.stream ?? DEFAULT_STREAM,
    consumer: options.consumer ?? DEFAULT_CONSUMER,
    subjectFilter: options.subjectFilter ?? DEFAULT_SUBJECT_FILTER,
    createStream: options.createStream ?? true,
    sqs: options.sqs,
    s3: options.s3,
    queueUrl: options.queueUrl,
    bucket: options.bucket,
    maxBytes: options.maxBytes,
    onReject: bridgeRejectionRecorder(() => options.bridgeDb ?? db),
    ...options.bridge,
  });
  try {
    await bridge.start();
  } catch (error) {
    await poller.stop();
    throw error;
  }

  return {
    bridge,
    poller,
    healthy: () => bridge.healthy() && poller.healthy(),
    async stop({ drainMs = 0 } = {}) {
      await bridge.stop();
      if (drainMs > 0) {
        const left = await waitForEmptyQueue(
          options.sqs,
          options.queueUrl,
          drainMs,
        );
        if (left > 0) {
          logger.warn('queue not empty at shutdown', { messages: left });
        }
      }
      await poller.stop();
    },
  };
}

/** Waits until the queue holds nothing; returns what is left at the deadline. */
export async function waitForEmptyQueue(
  sqs: SQSClient,
  queueUrl: string,
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let depth = -1;
    try {
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
      depth =
        Number(Attributes.ApproximateNumberOfMessages ?? 0) +
        Number(Attributes.ApproximateNumberOfMessagesNotVisible ?? 0) +
        Number(Attributes.ApproximateNumberOfMessagesDelayed ?? 0);
    } catch {
      // Unreachable: keep waiting until the deadline.
    }
    if (depth === 0) return 0;
    if (Date.now() >= deadline) return depth;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
