/**
 * Makes the local stack's in-memory SQS/S3 emulator (fauxqs keeps nothing on
 * disk) lose nothing the bridge handed it: every message the queue accepted
 * is written to DATA_DIR/queue and synced to disk before the send returns,
 * so before the bridge acks the stream message; it is removed when the sync
 * deletes the message. A claim check's object is kept beside it. At start,
 * what is left (the stack was killed with messages queued) is sent again, in
 * the order first sent, before the bridge and the poller start.
 *
 * It works on the AWS SDK clients the stack uses (a middleware on each), so
 * the bridge and the sync talk to the emulator exactly as to SQS and S3.
 * A replayed message keeps its deduplication id: a redelivered stream
 * message sent again is still one copy, and the sync skips a snapshot it
 * already applied.
 */
import { randomUUID } from 'node:crypto';
import {
  mkdir,
  open,
  readdir,
  readFile,
  rename,
  unlink,
} from 'node:fs/promises';
import { join } from 'node:path';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  type Message,
  type MessageAttributeValue,
  SendMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { logger } from '../../shared/observability/logger.ts';

/** One accepted message, as it is sent again after a restart. */
interface JournalEntry {
  body: string;
  attributes: Record<string, MessageAttributeValue>;
  groupId: string | undefined;
  deduplicationId: string | undefined;
  /** `s3://bucket/key` when the body is a claim check. */
  claim: string | undefined;
  /** Received its last time before the dead-letter queue: replayed there. */
  deadLetter?: boolean;
  /** Epoch ms of the first send, for the dead-letter queue's retention. */
  sentAt: number;
}

export interface QueueJournalOptions {
  dir: string;
  queueUrl: string;
  deadLetterQueueUrl: string | undefined;
  /** The queue's maxReceiveCount: its receive past this goes to the DLQ. */
  maxReceiveCount: number | undefined;
}

/** As long as AWS keeps a message in the dead-letter queue. */
const DEAD_LETTER_RETENTION_MS = 14 * 86_400_000;
const CLAIM_CHECK_ATTRIBUTE = 'claim-check';

interface SendInput {
  QueueUrl?: string;
  MessageBody?: string;
  MessageAttributes?: Record<string, MessageAttributeValue>;
  MessageGroupId?: string;
  MessageDeduplicationId?: string;
}

export class QueueJournal {
  readonly #options: QueueJournalOptions;
  readonly #messagesDir: string;
  readonly #claimsDir: string;
  /** Deduplication id → its file. */
  readonly #files = new Map<string, string>();
  /** Receipt handle → deduplication id, from the receives seen. */
  readonly #receipts = new Map<string, string>();
  #next = 0;
  #replaying = false;

  constructor(options: QueueJournalOptions) {
    this.#options = options;
    this.#messagesDir = join(options.dir, 'messages');
    this.#claimsDir = join(options.dir, 'claims');
  }

  /**
   * Sends again what a killed stack left, then journals every later send on
   * `sqs` and every claim put on `s3`. Returns how many were replayed.
   */
  async attach(sqs: SQSClient, s3: S3Client): Promise<number> {
    await mkdir(this.#messagesDir, { recursive: true });
    await mkdir(this.#claimsDir, { recursive: true });
    const replayed = await this.#replay(sqs, s3);
    sqs.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        await this.#afterSqs(
          context.commandName ?? '',
          args.input as Record<string, unknown>,
          result.output as unknown as Record<string, unknown>,
        );
        return result;
      },
      { step: 'initialize', name: 'localQueueJournal' },
    );
    s3.middlewareStack.add(
      (next, context) => async (args) => {
        const result = await next(args);
        if (context.commandName === 'PutObjectCommand' && !this.#replaying) {
          const input = args.input as {
            Bucket: string;
            Key: string;
            Body: unknown;
          };
          await this.#keepClaim(input.Bucket, input.Key, input.Body);
        }
        return result;
      },
      { step: 'initialize', name: 'localClaimJournal' },
    );
    return replayed;
  }

  async #afterSqs(
    command: string,
    input: Record<string, unknown>,
    output: Record<string, unknown>,
  ): Promise<void> {
    if (this.#replaying || input.QueueUrl !== this.#options.queueUrl) return;
    switch (command) {
      case 'SendMessageCommand':
        await this.#keep(input as SendInput);
        return;
      case 'SendMessageBatchCommand': {
        const ok = new Set(
          ((output.Successful ?? []) as { Id?: string }[]).map((s) => s.Id),
        );
        const entries = (input.Entries ?? []) as (SendInput & { Id: string })[];
        for (const entry of entries) {
          if (ok.has(entry.Id)) await this.#keep(entry);
        }
        return;
      }
      case 'ReceiveMessageCommand':
        await this.#received((output.Messages ?? []) as Message[]);
        return;
      case 'DeleteMessageCommand':
        await this.#deleted(input.ReceiptHandle as string);
        return;
      case 'DeleteMessageBatchCommand': {
        const ok = new Set(
          ((output.Successful ?? []) as { Id?: string }[]).map((s) => s.Id),
        );
        const entries = (input.Entries ?? []) as {
          Id: string;
          ReceiptHandle: string;
        }[];
        for (const entry of entries) {
          if (ok.has(entry.Id)) await this.#deleted(entry.ReceiptHandle);
        }
        return;
      }
    }
  }

  async #keep(input: SendInput): Promise<void> {
    const dedup = input.MessageDeduplicationId;
    // Already kept: a stream message sent again after a redelivery.
    if (dedup !== undefined && this.#files.has(dedup)) return;
    const attributes = input.MessageAttributes ?? {};
    const entry: JournalEntry = {
      body: input.MessageBody ?? '',
      attributes,
      groupId: input.MessageGroupId,
      deduplicationId: dedup,
      claim: attributes[CLAIM_CHECK_ATTRIBUTE]?.StringValue,
      sentAt: Date.now(),
    };
    const name = `${String(this.#next++).padStart(12, '0')}-${randomUUID()}.json`;
    await writeDurably(join(this.#messagesDir, name), JSON.stringify(entry));
    if (dedup !== undefined) this.#files.set(dedup, name);
  }

  async #received(messages: Message[]): Promise<void> {
    for (const message of messages) {
      const dedup = message.Attributes?.MessageDeduplicationId;
      if (dedup === undefined || message.ReceiptHandle === undefined) continue;
      this.#receipts.set(message.ReceiptHandle, dedup);
      const count = Number(message.Attributes?.ApproximateReceiveCount ?? 0);
      const max = this.#options.maxReceiveCount;
      // Its next receive moves it to the dead-letter queue: so does a replay.
      if (max !== undefined && count >= max) await this.#markDeadLetter(dedup);
    }
  }

  async #markDeadLetter(dedup: string): Promise<void> {
    const name = this.#files.get(dedup);
    if (name === undefined) return;
    const path = join(this.#messagesDir, name);
    const entry = await readEntry(path);
    if (entry === undefined || entry.deadLetter) return;
    await writeDurably(path, JSON.stringify({ ...entry, deadLetter: true }));
  }

  async #deleted(receiptHandle: string): Promise<void> {
    const dedup = this.#receipts.get(receiptHandle);
    if (dedup === undefined) return;
    this.#receipts.delete(receiptHandle);
    const name = this.#files.get(dedup);
    if (name === undefined) return;
    this.#files.delete(dedup);
    const path = join(this.#messagesDir, name);
    const entry = await readEntry(path);
    await unlink(path).catch(() => {});
    if (entry?.claim !== undefined) {
      await unlink(join(this.#claimsDir, claimFile(entry.claim))).catch(
        () => {},
      );
    }
  }

  async #keepClaim(bucket: string, key: string, body: unknown): Promise<void> {
    const bytes =
      typeof body === 'string'
        ? Buffer.from(body)
        : body instanceof Uint8Array
          ? body
          : undefined;
    // The bridge puts a Buffer; anything else is not one of its claims.
    if (bytes === undefined) return;
    await writeDurably(
      join(this.#claimsDir, claimFile(`s3://${bucket}/${key}`)),
      bytes,
    );
  }

  async #replay(sqs: SQSClient, s3: S3Client): Promise<number> {
    const names = (await readdir(this.#messagesDir))
      .filter((n) => n.endsWith('.json'))
      .sort();
    this.#replaying = true;
    let replayed = 0;
    try {
      for (const name of names) {
        this.#next = Math.max(this.#next, Number.parseInt(name, 10) + 1 || 0);
        const path = join(this.#messagesDir, name);
        const entry = await readEntry(path);
        if (entry === undefined) {
          await unlink(path).catch(() => {});
          continue;
        }
        const toDeadLetter =
          entry.deadLetter === true &&
          this.#options.deadLetterQueueUrl !== undefined;
        if (
          toDeadLetter &&
          Date.now() - entry.sentAt > DEAD_LETTER_RETENTION_MS
        ) {
          await unlink(path).catch(() => {});
          continue;
        }
        if (entry.claim !== undefined) {
          await restoreClaim(s3, this.#claimsDir, entry.claim);
        }
        await sqs.send(
          new SendMessageCommand({
            QueueUrl: toDeadLetter
              ? this.#options.deadLetterQueueUrl
              : this.#options.queueUrl,
            MessageBody: entry.body,
            MessageAttributes: entry.attributes,
            MessageGroupId: entry.groupId,
            MessageDeduplicationId: entry.deduplicationId,
          }),
        );
        if (toDeadLetter) {
          // The dead-letter queue's copy is the emulator's from now on.
          await unlink(path).catch(() => {});
        } else if (entry.deduplicationId !== undefined) {
          this.#files.set(entry.deduplicationId, name);
        }
        replayed++;
      }
    } finally {
      this.#replaying = false;
    }
    if (replayed > 0) {
      logger.info('local queue: messages kept on disk sent again', {
        messages: replayed,
      });
    }
    return replayed;
  }
}

async function restoreClaim(
  s3: S3Client,
  claimsDir: string,
  pointer: string,
): Promise<void> {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(pointer);
  if (!match) return;
  let body: Buffer;
  try {
    body = await readFile(join(claimsDir, claimFile(pointer)));
  } catch {
    // Lost with its put: the sync records the message as refused.
    return;
  }
  await s3.send(
    new PutObjectCommand({ Bucket: match[1], Key: match[2], Body: body }),
  );
}

/** A claim's pointer as one file name. */
function claimFile(pointer: string): string {
  return encodeURIComponent(pointer);
}

async function readEntry(path: string): Promise<JournalEntry | undefined> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as JournalEntry;
  } catch {
    // Missing, or cut short by a kill mid-write (never renamed into place).
    return undefined;
  }
}

/** Written to a temporary name, synced, then renamed: whole or not at all. */
async function writeDurably(
  path: string,
  data: string | Uint8Array,
): Promise<void> {
  const temporary = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}
