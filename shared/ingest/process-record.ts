/**
 * The sync worker's per-record step and batch: one SQS FIFO record in, one
 * snapshot applied (or refused) in PostgreSQL.
 *
 * A record that can never apply (bad body, bad subject, unknown tenant) is
 * stored in ingest_rejections, logged and counted, and then SUCCEEDS: the
 * queue must not redeliver it forever. Anything else (database, S3, timeout)
 * fails the record so the queue redelivers it; the FIFO processor then fails
 * the later records of its own group (agent), so nothing overtakes it, while
 * other agents' records go on. An unexpected failure has a bounded life: on
 * the queue's last receive (`maxReceives`) it is recorded in
 * ingest_rejections before the queue moves it to the dead-letter queue.
 *
 * A batch's records run one after another inside one invocation. Before
 * each record after the first, the invocation must still have room for a
 * whole sync (its transaction bound plus a margin); when it has not, that
 * record fails as transient (the batch ran out of time), and it and the
 * rest of the batch come back from the queue instead of being cut off
 * mid-transaction by the function timeout.
 */

import {
  processPartialResponse,
  SqsFifoPartialProcessorAsync,
} from '@aws-lambda-powertools/batch';
import type {
  Context,
  SQSBatchResponse,
  SQSEvent,
  SQSRecord,
} from 'aws-lambda';
import type { Db } from '../db/pool.ts';
import { RejectedInventoryError } from '../errors.ts';
import { faultPoint } from '../faults.ts';
import type { SeriesWrites } from '../metrics/after-sync.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';
import {
  type SpanRunner,
  type SyncResult,
  syncInventory,
} from '../sync/sync.ts';
import { decodeInventoryJson } from '../wire/decode.ts';
import { parseSubject } from '../wire/subject.ts';
import {
  type ClaimReader,
  decodeQueuedInventory,
  publishedSize,
  QueueAttribute,
} from './queue-message.ts';
import { recordRejection } from './rejections.ts';

/** What one record's processing needs; built once per process. */
export interface SyncDeps {
  db: Db;
  s3: ClaimReader;
  /** The sync transaction's bound (the spec's 60 s). */
  timeoutMs: number;
  eventRetentionHours: number;
  /**
   * The queue's maxReceiveCount: a record failing on this receive is
   * recorded as rejected, then fails once more and goes to the dead-letter
   * queue. Unset: never recorded (the queue keeps retrying).
   */
  maxReceives?: number;
  eventHistoryDays?: number;
  span?: SpanRunner;
  now?: () => Date;
  /**
   * Writes the cluster's series after each applied snapshot (optional), off
   * the record's path; processBatch awaits them before it returns.
   */
  seriesWrites?: SeriesWrites | undefined;
  /** Called once a record is settled for good (committed or refused). */
  onProcessed?: (info: ProcessedRecord) => void;
}

export type RecordOutcome = SyncResult['outcome'] | 'rejected';

/** A settled record, with where its time went (ms). */
export interface ProcessedRecord {
  messageId: string;
  subject: string;
  streamSeq: number | undefined;
  outcome: RecordOutcome;
  clusterId: string | undefined;
  /** Epoch ms when the handler took the record, and when it was settled. */
  startedAt: number;
  finishedAt: number;
  /**
   * Reading the record back (S3, gzip), parsing the JSON and validating
   * all but its rows (the sync validates those that changed).
   */
  decodeMs: number;
  /** The sync transaction, lock wait included. */
  syncMs: number;
  /** Of syncMs, the digests and the schema on the changed rows. */
  validationMs: number;
}

/** Room kept, beyond the transaction bound, to read and settle a record. */
export const RECORD_TIME_MARGIN_MS = 5_000;

export const OUT_OF_TIME_MESSAGE = 'the batch ran out of time';

/** A record left for the queue to redeliver: too little time was left. */
export class BatchOutOfTimeError extends Error {
  constructor(remainingMs: number, neededMs: number) {
    super(
      `${OUT_OF_TIME_MESSAGE}: ${remainingMs} ms left, a record needs ${neededMs} ms`,
    );
    this.name = 'BatchOutOfTimeError';
  }
}

export const CLAMPED_MESSAGE =
  'kubernetes snapshot stamped in the future, clamped';

export const CLOCK_STEPPED_BACK_MESSAGE =
  'kubernetes snapshot stamped before the one applied, though later in the stream: the agent clock stepped back; skipped, the cluster kept connected';

export const DUPLICATES_MESSAGE =
  'kubernetes snapshot carries one key more than once; the last row kept';

/**
 * Applies one queued snapshot. Resolves when it is applied, skipped as
 * older, or refused and recorded; throws when it should be retried.
 * The `k8s.process_message` span covers all of it: decoding (claim check,
 * gunzip), parse and validation, the tenant lookup, the transaction and its
 * commit, and a refusal's recording.
 */
export function processRecord(
  record: SQSRecord,
  deps: SyncDeps,
): Promise<RecordOutcome> {
  const span = deps.span ?? ((_name, fn) => fn());
  return span('k8s.process_message', async () => {
    const outcome = await processMessage(record, deps);
    // Settled for good; the queue deletes the record only once this returns.
    await faultPoint('record.before-delete', {
      messageId: record.messageId,
      outcome,
    });
    return outcome;
  });
}

async function processMessage(
  record: SQSRecord,
  deps: SyncDeps,
): Promise<RecordOutcome> {
  const startedAt = Date.now();
  let subject = attribute(record, QueueAttribute.subject) ?? '';
  let streamSeq = sequenceOf(attribute(record, QueueAttribute.streamSeq));
  // As published on NATS, not as queued (a claim check's pointer is ~160 B).
  const sizeBytes = publishedSize(record);
  let decodeMs = 0;
  try {
    const queued = await decodeQueuedInventory(record, deps.s3);
    subject = queued.subject;
    streamSeq = queued.streamSeq;
    const parsedSubject = parseSubject(queued.subject);
    // The envelope and each kind array's shape; the sync validates the rows
    // its stored digests do not know (issue #15).
    const inventory = decodeInventoryJson(queued.json);
    decodeMs = Date.now() - startedAt;

    const result = await syncInventory(deps.db, parsedSubject, inventory, {
      streamSeq,
      timeoutMs: deps.timeoutMs,
      eventRetentionHours: deps.eventRetentionHours,
      ...(deps.eventHistoryDays
        ? { eventHistoryDays: deps.eventHistoryDays }
        : {}),
      ...(deps.span ? { span: deps.span } : {}),
      ...(deps.now ? { now: deps.now } : {}),
    });
    report(record, subject, streamSeq, result);
    countProcessed(result.outcome, startedAt);
    deps.onProcessed?.({
      messageId: record.messageId,
      subject,
      streamSeq,
      outcome: result.outcome,
      clusterId: result.clusterId,
      startedAt,
      finishedAt: Date.now(),
      decodeMs,
      syncMs: result.durationMs,
      validationMs: result.validationMs,
    });
    if (deps.seriesWrites && result.outcome === 'applied') {
      await deps.seriesWrites.enqueue(result.seriesRows, result);
    }
    return result.outcome;
  } catch (error) {
    if (!(error instanceof RejectedInventoryError)) {
      const receiveCount = Number(record.attributes?.ApproximateReceiveCount);
      const lastReceive =
        deps.maxReceives !== undefined && receiveCount >= deps.maxReceives;
      logger.error(
        lastReceive
          ? 'inventory sync failed on its last receive; recorded and left to the dead-letter queue'
          : 'inventory sync failed; the queue will retry it',
        {
          subject,
          streamSeq,
          messageId: record.messageId,
          receiveCount,
          error: boundedText(errorText(error)),
        },
      );
      if (lastReceive) {
        await recordRejection(deps.db, {
          stage: 'sync',
          subject: subject || '(no subject)',
          streamSeq,
          reason: `failed on each of ${receiveCount} receives, moved to the dead-letter queue: ${boundedText(errorText(error))}`,
          sizeBytes,
        });
      }
      throw error;
    }
    // Refused for good: keep the reason, then let the record succeed.
    await recordRejection(deps.db, {
      stage: 'sync',
      subject: subject || '(no subject)',
      streamSeq,
      reason: error.reason,
      sizeBytes,
    });
    countProcessed('rejected', startedAt);
    logger.warn('inventory rejected', {
      stage: 'sync',
      subject,
      streamSeq,
      messageId: record.messageId,
      reason: error.reason,
    });
    deps.onProcessed?.({
      messageId: record.messageId,
      subject,
      streamSeq,
      outcome: 'rejected',
      clusterId: undefined,
      startedAt,
      finishedAt: Date.now(),
      decodeMs: decodeMs || Date.now() - startedAt,
      syncMs: 0,
      validationMs: 0,
    });
    return 'rejected';
  }
}

/**
 * One Lambda SQS FIFO event: records in order; a failure fails itself and
 * every later record of its group (`batchItemFailures`), and the other
 * groups' records still run. It returns once the series writes its records
 * queued have ended (each bounded by its deadline), so none is frozen in
 * flight when the invocation ends.
 */
export async function processBatch(
  event: SQSEvent,
  deps: SyncDeps,
  context?: Context,
): Promise<SQSBatchResponse> {
  try {
    return await processRecords(event, deps, context);
  } finally {
    await deps.seriesWrites?.settled();
  }
}

function processRecords(
  event: SQSEvent,
  deps: SyncDeps,
  context?: Context,
): Promise<SQSBatchResponse> {
  // The processor keeps per-batch state: one per event.
  const processor = new SqsFifoPartialProcessorAsync();
  let started = 0;
  return processPartialResponse(
    event,
    async (record: SQSRecord) => {
      // The first record always runs: the function timeout is set above the
      // transaction bound, and deferring it would stall the group for good.
      if (started++ > 0 && context !== undefined) {
        assertTimeLeft(record, deps, context);
      }
      return processRecord(record, deps);
    },
    processor,
    // A failed record holds back only the later records of its own group.
    { skipGroupOnError: true, ...(context === undefined ? {} : { context }) },
  );
}

/** Throws BatchOutOfTimeError when a whole sync may no longer fit. */
function assertTimeLeft(
  record: SQSRecord,
  deps: SyncDeps,
  context: Context,
): void {
  const remainingMs = context.getRemainingTimeInMillis();
  const neededMs = deps.timeoutMs + RECORD_TIME_MARGIN_MS;
  if (remainingMs >= neededMs) return;
  logger.warn(`${OUT_OF_TIME_MESSAGE}; the queue redelivers the rest`, {
    messageId: record.messageId,
    subject: attribute(record, QueueAttribute.subject),
    remainingMs,
    neededMs,
  });
  throw new BatchOutOfTimeError(remainingMs, neededMs);
}

/** The structured log line and the spec's metrics for one sync. */
function report(
  record: SQSRecord,
  subject: string,
  streamSeq: number | undefined,
  result: SyncResult,
): void {
  const counts = Object.fromEntries(
    Object.entries(result.kinds).map(([kind, c]) => [
      kind,
      { received: c.received, upserted: c.upserted, pruned: c.pruned },
    ]),
  );
  for (const [kind, c] of Object.entries(result.kinds)) {
    if (c.duplicates === 0) continue;
    // The agent sent one key twice: the last row was kept. Bounded: a few
    // keys, each cut short.
    logger.warn(DUPLICATES_MESSAGE, {
      subject,
      clusterId: result.clusterId,
      kind,
      duplicates: c.duplicates,
      keys: c.duplicateKeys,
    });
    const single = metrics.singleMetric();
    single.addDimension('kind', kind);
    single.addMetric(MetricName.duplicateRows, MetricUnit.Count, c.duplicates);
  }
  if (result.clockSteppedBack) {
    logger.warn(CLOCK_STEPPED_BACK_MESSAGE, {
      subject,
      clusterId: result.clusterId,
      snapshotAt: result.snapshotAt.toISOString(),
    });
  }
  if (result.clamped) {
    logger.warn(CLAMPED_MESSAGE, {
      subject,
      clusterId: result.clusterId,
      snapshotAt: result.snapshotAt.toISOString(),
    });
  }
  logger.info(
    result.outcome === 'applied'
      ? 'inventory synced'
      : 'older snapshot skipped',
    {
      subject,
      streamSeq,
      messageId: record.messageId,
      clusterId: result.clusterId,
      outcome: result.outcome,
      snapshotAt: result.snapshotAt.toISOString(),
      durationMs: Math.round(result.durationMs),
      kinds: counts,
      linkage: result.linkage,
      facts: result.facts,
    },
  );

  if (result.outcome === 'skipped_not_newer') {
    metrics.addMetric(MetricName.snapshotsSkipped, MetricUnit.Count, 1);
    metrics.addMetric(
      MetricName.specFactsNotNewer,
      MetricUnit.Count,
      result.facts.notNewer,
    );
    return;
  }
  // The spec's node and workload "upserts": every row the snapshot carried,
  // written or found unchanged by its digest.
  const nodes = result.kinds.nodes;
  if (nodes !== undefined) {
    metrics.addMetric(MetricName.nodesSynced, MetricUnit.Count, nodes.received);
    for (const outcome of ['linked', 'unlinked'] as const) {
      const single = metrics.singleMetric();
      single.addDimension('result', outcome);
      single.addMetric(
        MetricName.nodeHostLinkage,
        MetricUnit.Count,
        result.linkage[outcome],
      );
    }
  }
  const workloads = result.kinds.workloads;
  if (workloads !== undefined) {
    metrics.addMetric(
      MetricName.workloadsSynced,
      MetricUnit.Count,
      workloads.received,
    );
  }
  metrics.addMetric(
    MetricName.specFactsNotNewer,
    MetricUnit.Count,
    result.facts.notNewer,
  );
  metrics.addMetric(
    MetricName.changeRecordsWritten,
    MetricUnit.Count,
    result.facts.recorded,
  );
}

/**
 * The spec's "time to process a kubernetes message" and "syncs processed",
 * labelled by outcome: every settled message counts, refusals and not-newer
 * skips included, its time from receipt (decoding and validation too).
 */
function countProcessed(outcome: RecordOutcome, startedAt: number): void {
  const seconds = (Date.now() - startedAt) / 1000;
  // A single metric is flushed, dimensions and all, by its first addMetric.
  const duration = metrics.singleMetric();
  duration.addDimension('outcome', outcome);
  duration.addMetric(MetricName.syncDuration, MetricUnit.Seconds, seconds);
  const synced = metrics.singleMetric();
  synced.addDimension('outcome', outcome);
  synced.addMetric(MetricName.clustersSynced, MetricUnit.Count, 1);
}

function attribute(record: SQSRecord, name: string): string | undefined {
  return record.messageAttributes?.[name]?.stringValue;
}

function sequenceOf(text: string | undefined): number | undefined {
  if (text === undefined || !/^[0-9]{1,15}$/.test(text)) return undefined;
  return Number(text);
}

/** An error's text as logged and recorded: bounded, whatever it quotes. */
function boundedText(text: string, max = 300): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

function errorText(error: unknown): string {
  return error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
}
