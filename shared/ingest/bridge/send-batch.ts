/**
 * Sending a batch: each held message encoded for the queue (big bodies by
 * S3 claim check), then one SendMessageBatch; what SQS took or refused is
 * returned per message for settlement.
 */
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { JsMsg } from '@nats-io/jetstream';
import { Match } from '@nats-io/transport-node';
import { RejectedInventoryError } from '../../errors.ts';
import { parseSubject, queueGroupId } from '../../wire/subject.ts';
import {
  type ContentEncoding,
  deduplicationId,
  encodeForQueue,
} from '../queue-message.ts';
import type { HeldMessage } from './held-message.ts';
import { errorText } from './options.ts';
import type { SendOutcome } from './settlement.ts';

/** SendMessageBatch's limit on entries. */
export const SQS_BATCH_ENTRIES = 10;

export interface QueueTarget {
  sqs: SQSClient;
  s3: S3Client;
  queueUrl: string;
  bucket: string;
  /** The queue's MaximumMessageSize; bodies above it go by claim check. */
  maxBytes: number;
  /** Stream name and incarnation, for dedup ids and claim keys. */
  scope: string;
}

/**
 * Parses the subject and encodes the body onto the item; returns a reason
 * when the message can never go (bad subject, unsupported encoding).
 */
export function prepareForQueue(
  item: HeldMessage,
  target: QueueTarget,
): string | undefined {
  let encoding: ContentEncoding;
  try {
    item.group = queueGroupId(parseSubject(item.subject));
    encoding = contentEncodingOf(item.msg);
  } catch (error) {
    if (error instanceof RejectedInventoryError) return error.reason;
    throw error;
  }
  item.encoded = encodeForQueue({
    subject: item.subject,
    streamSeq: item.seq,
    body: item.msg.data,
    contentEncoding: encoding,
    maxBytes: target.maxBytes,
    bucket: target.bucket,
    scope: target.scope,
  });
  return undefined;
}

/** The NATS `Content-Encoding` header: gzip, identity, or a refusal. */
function contentEncodingOf(msg: JsMsg): ContentEncoding {
  const value = msg.headers
    ?.get('Content-Encoding', Match.IgnoreCase)
    .trim()
    .toLowerCase();
  if (value === undefined || value === '' || value === 'identity') {
    return undefined;
  }
  if (value === 'gzip') return 'gzip';
  // The value is the sender's text: not quoted.
  throw new RejectedInventoryError(
    'header Content-Encoding: unsupported (gzip or none)',
  );
}

/**
 * Uploads the batch's claim checks, then sends the rest in one
 * SendMessageBatch. A group whose claim check failed sends none of its
 * later messages (they have no outcome: settlement naks them behind it).
 */
export async function sendBatch(
  batch: readonly HeldMessage[],
  target: QueueTarget,
): Promise<Map<HeldMessage, SendOutcome>> {
  const outcomes = new Map<HeldMessage, SendOutcome>();
  await Promise.all(
    batch.map(async (item) => {
      const encoded = item.encoded!;
      if (encoded.kind !== 'claim-check') return;
      try {
        await target.s3.send(
          new PutObjectCommand({
            Bucket: encoded.claim.bucket,
            Key: encoded.claim.key,
            Body: encoded.claim.body,
            ContentType: encoded.claim.contentType,
          }),
        );
      } catch (error) {
        outcomes.set(item, {
          ok: false,
          error: `claim check upload failed: ${errorText(error)}`,
        });
      }
    }),
  );
  const failedGroups = new Set<string>();
  const entries: SendMessageBatchRequestEntry[] = [];
  const byId = new Map<string, HeldMessage>();
  for (const [index, item] of batch.entries()) {
    if (outcomes.has(item)) {
      failedGroups.add(item.group!);
      continue;
    }
    if (failedGroups.has(item.group!)) continue;
    const id = `m${index}`;
    byId.set(id, item);
    const message = item.encoded!.message;
    entries.push({
      Id: id,
      MessageBody: message.body,
      MessageAttributes: message.attributes,
      MessageGroupId: item.group!,
      MessageDeduplicationId: deduplicationId(target.scope, item.seq),
    });
  }
  if (entries.length === 0) return outcomes;
  try {
    const result = await target.sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: target.queueUrl,
        Entries: entries,
      }),
    );
    for (const ok of result.Successful ?? []) {
      const item = byId.get(ok.Id ?? '');
      if (item !== undefined) {
        outcomes.set(item, { ok: true, sqsMessageId: ok.MessageId ?? '' });
      }
    }
    for (const failed of result.Failed ?? []) {
      const item = byId.get(failed.Id ?? '');
      if (item !== undefined) {
        outcomes.set(item, {
          ok: false,
          error: `${failed.Code ?? 'error'}: ${failed.Message ?? ''}`,
        });
      }
    }
  } catch (error) {
    for (const item of byId.values()) {
      outcomes.set(item, {
        ok: false,
        error: `SendMessageBatch failed: ${errorText(error)}`,
      });
    }
  }
  return outcomes;
}

/**
 * Tells the stream the batch is being worked on while `work` runs, so a
 * slow upload does not pass the ack wait and get the messages redelivered.
 */
export async function keepingInProgress<T>(
  batch: readonly HeldMessage[],
  ackWaitMs: number,
  work: () => Promise<T>,
): Promise<T> {
  const heartbeat = setInterval(
    () => {
      for (const item of batch) workingOn(item);
    },
    Math.max(250, ackWaitMs / 3),
  );
  try {
    return await work();
  } finally {
    clearInterval(heartbeat);
  }
}

/**
 * Tells the stream the message is still being worked on. A closed
 * connection throws here: the message then comes back after ack_wait,
 * which is what a dead process leaves too.
 */
export function workingOn(item: HeldMessage): void {
  try {
    item.msg.working();
  } catch {
    // Connection gone: nothing to extend.
  }
}
