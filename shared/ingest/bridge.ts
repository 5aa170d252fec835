/**
 * The bridge: a durable JetStream pull consumer on the EVENTS stream that
 * forwards each inventory to the SQS FIFO queue (big bodies by S3 claim
 * check) and acks the stream message only once SQS accepted it. Nothing is
 * acked that was not delivered: a failure naks with a growing delay, a
 * message that can never be forwarded (bad subject, unknown encoding) is
 * recorded through `onReject`, logged, counted and terminated.
 *
 * Messages are pulled with bounded fetches, so at most `maxInFlight` are in
 * memory (an inventory is up to NATS's max_payload, 8 MB locally), and sent
 * with SendMessageBatch when several wait. One agent's snapshots stay in
 * order: within a batch, and across batches while an earlier one of the same
 * FIFO group waits for its redelivery.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import {
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import {
  AckPolicy,
  type Consumer,
  type ConsumerMessages,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  type JsMsg,
  jetstream,
  jetstreamManager,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';
import {
  connect,
  credsAuthenticator,
  Match,
  type NatsConnection,
  nanos,
} from '@nats-io/transport-node';
import { RejectedInventoryError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { MetricName, MetricUnit, metrics } from '../observability/metrics.ts';
import { parseSubject, queueGroupId } from '../wire/subject.ts';
import {
  type ContentEncoding,
  deduplicationId,
  type EncodedForQueue,
  encodeForQueue,
  SQS_MAX_MESSAGE_BYTES,
} from './queue-message.ts';

/**
 * Subjects of the stream when the bridge creates (or owns) it: telemetry
 * subjects have exactly five tokens. Never `proxima.>`: that would capture
 * the live reads' `proxima.system.commands.{agent_id}` requests, and the
 * stream's publish acknowledgement would answer every request before the
 * agent could (wire contract, Transport).
 */
export const STREAM_SUBJECTS = ['proxima.*.*.*.*'];
/** A subject the stream must never capture (the live reads' requests). */
const COMMAND_SUBJECT_PROBE = 'proxima.system.commands.probe';
/** Long enough for an 8 MB S3 upload plus SDK retries; `working()` extends it. */
export const DEFAULT_ACK_WAIT_MS = 60_000;
/**
 * With the backoff below (1 s doubling to 60 s) this rides out about an hour
 * and a half of queue outage. A snapshot still unsent after that is stale
 * (the agent has sent newer ones): it is recorded as rejected, not lost.
 */
export const DEFAULT_MAX_DELIVER = 100;
const SQS_BATCH_ENTRIES = 10;
/** A client's pull expiry; also bounds how long stop() waits for a pull. */
const FETCH_EXPIRES_MS = 10_000;
const FETCH_RETRY_MS = 1_000;

export interface RejectInfo {
  subject: string;
  reason: string;
  streamSeq: number;
}

export interface BridgeStats {
  forwarded: number;
  claimChecked: number;
  rejected: number;
  sendFailures: number;
  /** The consumer's num_pending at the last poll. */
  consumerLag: number;
  connected: boolean;
  consumerReady: boolean;
}

export interface SentEntry {
  subject: string;
  streamSeq: number;
  sqsMessageId: string;
}

export interface NatsConnectOptions {
  url: string;
  /** A `.creds` file's content, or its path. */
  creds?: string;
  name?: string;
}

export interface BridgeOptions {
  /** A connection the caller owns, or where to connect (then the bridge owns and drains it). */
  nats: NatsConnection | NatsConnectOptions;
  stream: string;
  consumer: string;
  subjectFilter: string;
  /** Create the stream and durable consumer when missing; else require them. */
  createStream: boolean;
  sqs: SQSClient;
  s3: S3Client;
  queueUrl: string;
  bucket: string;
  /** The queue's MaximumMessageSize; bodies above it go by claim check. */
  maxBytes: number;
  /** Keeps a rejected message's reason; a throw naks it to try again later. */
  onReject?: (info: RejectInfo) => Promise<void>;
  /** Serves GET /healthz when set (0 picks a free port). */
  healthPort?: number;
  /** How often consumer lag is polled and metrics are published. */
  statsIntervalMs?: number;
  /** Consumer settings used when the bridge creates the consumer. */
  ackWaitMs?: number;
  maxDeliver?: number;
  /** Nak delay: base × 2^(deliveries − 1), capped. */
  retryBackoff?: { baseMs: number; maxMs: number };
  /** Messages held at once (pulled, not yet acked or naked). */
  maxInFlight?: number;
  /** Test seam: runs after SQS accepted a batch and before the acks. */
  afterSend?: (sent: SentEntry[]) => Promise<void>;
}

export class BridgeSetupError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BridgeSetupError';
  }
}

export class BridgeConnectionLostError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'BridgeConnectionLostError';
  }
}

interface Held {
  msg: JsMsg;
  seq: number;
  subject: string;
  deliveries: number;
  group?: string;
  encoded?: EncodedForQueue;
  settled?: boolean;
}

type Outcome =
  | { ok: true; sqsMessageId: string }
  | { ok: false; error: string };

/** Connects with a name and reconnects forever. */
export async function connectNats(
  options: NatsConnectOptions,
): Promise<NatsConnection> {
  const creds = options.creds;
  const authenticator =
    creds === undefined
      ? undefined
      : credsAuthenticator(
          new TextEncoder().encode(
            creds.includes('BEGIN NATS USER JWT')
              ? creds
              : await readFile(creds, 'utf8'),
          ),
        );
  return connect({
    servers: options.url,
    name: options.name ?? 'k8s-inventory-bridge',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 2_000,
    // ECS may start the bridge before NATS answers: keep trying.
    waitOnFirstConnect: true,
    ...(authenticator === undefined ? {} : { authenticator }),
  });
}

export class Bridge {
  readonly #o: BridgeOptions;
  readonly #maxInFlight: number;
  readonly #backoff: { baseMs: number; maxMs: number };
  #nc: NatsConnection | undefined;
  #ownsConnection = false;
  #scope = '';
  #maxDeliver = -1;
  #ackWaitMs = DEFAULT_ACK_WAIT_MS;
  #fetch: ConsumerMessages | undefined;
  #held: Held[] = [];
  #inFlight = 0;
  #wake: (() => void) | undefined;
  #room: (() => void) | undefined;
  /**
   * Per FIFO group, the stream sequences naked and not yet forwarded, each
   * with when to stop waiting for it (another bridge may have taken it).
   * A message waits while an older one of its group is outstanding.
   */
  #outstanding = new Map<string, Map<number, number>>();
  #termReason = false;
  #running = false;
  #stopping = false;
  #pump: Promise<void> | undefined;
  #sender: Promise<void> | undefined;
  #timer: NodeJS.Timeout | undefined;
  #health: Server | undefined;
  #stopped: Promise<void> | undefined;
  #closed: Promise<void>;
  #settleClosed!: { resolve: () => void; reject: (e: Error) => void };
  #counts = { forwarded: 0, claimChecked: 0, rejected: 0, sendFailures: 0 };
  #published = { forwarded: 0, claimChecked: 0, rejected: 0, sendFailures: 0 };
  #lag = 0;
  #connected = false;
  #consumerReady = false;

  constructor(options: BridgeOptions) {
    this.#o = options;
    this.#maxInFlight = options.maxInFlight ?? 20;
    this.#backoff = options.retryBackoff ?? { baseMs: 1_000, maxMs: 60_000 };
    this.#closed = new Promise<void>((resolve, reject) => {
      this.#settleClosed = { resolve, reject };
    });
    // Awaited by whoever calls closed(); never an unhandled rejection.
    this.#closed.catch(() => {});
  }

  /**
   * Connects (unless given a connection), checks or creates the stream and
   * consumer, starts /healthz and begins forwarding. Resolves once running.
   */
  async start(): Promise<void> {
    if (this.#running) return;
    if (this.#o.healthPort !== undefined) {
      this.#health = await serveHealth(this.#o.healthPort, () =>
        this.healthy(),
      );
    }
    try {
      const given = this.#o.nats;
      if (isConnectOptions(given)) {
        this.#nc = await connectNats(given);
        this.#ownsConnection = true;
      } else {
        this.#nc = given;
      }
      this.#connected = !this.#nc.isClosed();
      this.#termReason = atLeast(this.#nc.info?.version, 2, 11);
      this.#watchConnection(this.#nc);
      await this.#prepareConsumer(this.#nc);
    } catch (error) {
      // Not a lost connection: the drain below is ours.
      this.#stopping = true;
      await this.#release();
      throw error;
    }
    this.#running = true;
    this.#pump = this.#pullLoop();
    this.#sender = this.#sendLoop();
    this.#timer = setInterval(
      () => void this.#pollStats(),
      this.#o.statsIntervalMs ?? 15_000,
    );
    this.#timer.unref();
    logger.info('bridge started', {
      stream: this.#o.stream,
      consumer: this.#o.consumer,
      queueUrl: this.#o.queueUrl,
      maxBytes: this.#o.maxBytes,
    });
  }

  /**
   * Stops pulling, finishes what it holds (send and ack, or nak), publishes
   * metrics and drains the connection it owns. Safe to call more than once.
   */
  stop(): Promise<void> {
    this.#stopped ??= this.#shutdown();
    return this.#stopped;
  }

  /**
   * Resolves after a graceful stop; rejects with BridgeConnectionLostError
   * when the NATS connection closed for good while the bridge was running.
   */
  closed(): Promise<void> {
    return this.#closed;
  }

  /** Connected to NATS and the consumer answered its last info request. */
  healthy(): boolean {
    return this.#connected && this.#consumerReady;
  }

  stats(): BridgeStats {
    return {
      ...this.#counts,
      consumerLag: this.#lag,
      connected: this.#connected,
      consumerReady: this.#consumerReady,
    };
  }

  /** Where /healthz listens, when it does. */
  healthAddress(): AddressInfo | undefined {
    const address = this.#health?.address();
    return address !== null && typeof address === 'object'
      ? address
      : undefined;
  }

  async #shutdown(): Promise<void> {
    await this.#wind();
    if (this.#connected) {
      await this.#pollStats();
    } else {
      this.#publishMetrics();
    }
    await this.#release();
    logger.info('bridge stopped', { ...this.#counts });
    this.#settleClosed.resolve();
  }

  /** Stops pulling and waits until every held message is settled. */
  async #wind(): Promise<void> {
    this.#stopping = true;
    this.#fetch?.stop();
    this.#room?.();
    this.#wake?.();
    await this.#pump;
    await this.#sender;
    this.#running = false;
  }

  async #release(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    const health = this.#health;
    this.#health = undefined;
    if (health !== undefined) {
      await new Promise<void>((resolve) => health.close(() => resolve()));
    }
    const nc = this.#nc;
    if (this.#ownsConnection && nc !== undefined && !nc.isClosed()) {
      // drain() flushes the acks still in the socket buffer; with no server
      // there is nothing to flush, and drain would wait for a reconnect.
      const ending = this.#connected ? nc.drain() : nc.close();
      await ending.catch((error: unknown) => {
        logger.warn('nats drain failed', { error: errorText(error) });
      });
    }
  }

  #watchConnection(nc: NatsConnection): void {
    void (async () => {
      for await (const status of nc.status()) {
        if (status.type === 'disconnect') {
          this.#connected = false;
          logger.warn('nats disconnected', { server: status.server });
        } else if (status.type === 'reconnect') {
          this.#connected = true;
          logger.info('nats reconnected', { server: status.server });
        }
      }
    })();
    void nc.closed().then((error) => {
      this.#connected = false;
      if (this.#stopping) return;
      const lost = new BridgeConnectionLostError(
        `NATS connection closed${error ? `: ${error.message}` : ''}`,
        error ? { cause: error } : undefined,
      );
      logger.error('nats connection lost for good', { error: lost.message });
      void (async () => {
        await this.#wind();
        await this.#release();
        this.#settleClosed.reject(lost);
      })();
    });
  }

  async #prepareConsumer(nc: NatsConnection): Promise<void> {
    const { stream, consumer } = this.#o;
    const jsm = await jetstreamManager(nc);
    const streamInfo = await this.#ensureStream(jsm);
    // A recreated stream restarts its sequences; the creation time keeps
    // dedup ids and claim keys of two incarnations apart.
    const created = Date.parse(streamInfo.created);
    this.#scope = Number.isNaN(created)
      ? stream
      : `${stream}-${created.toString(36)}`;

    let info = await findConsumer(jsm, stream, consumer);
    if (info === undefined) {
      if (!this.#o.createStream) {
        throw new BridgeSetupError(
          `durable consumer ${consumer} on stream ${stream} does not exist (create it, or set NATS_CREATE_STREAM)`,
        );
      }
      info = await jsm.consumers.add(stream, {
        durable_name: consumer,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        filter_subject: this.#o.subjectFilter,
        ack_wait: nanos(this.#o.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
        max_deliver: this.#o.maxDeliver ?? DEFAULT_MAX_DELIVER,
      });
      logger.info('consumer created', { stream, consumer });
    } else if (info.config.filter_subject !== this.#o.subjectFilter) {
      logger.warn('consumer filter differs from configuration', {
        consumer,
        filter: info.config.filter_subject,
        configured: this.#o.subjectFilter,
      });
    }
    this.#maxDeliver = info.config.max_deliver ?? -1;
    this.#ackWaitMs = Math.round((info.config.ack_wait ?? 0) / 1e6) || 30_000;
    this.#lag = info.num_pending;
    this.#consumerReady = true;
  }

  async #ensureStream(jsm: JetStreamManager) {
    const { stream } = this.#o;
    try {
      const info = await jsm.streams.info(stream);
      return await this.#checkStreamSubjects(jsm, info);
    } catch (error) {
      if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
      if (!this.#o.createStream) {
        throw new BridgeSetupError(
          `stream ${stream} does not exist (create it, or set NATS_CREATE_STREAM)`,
          { cause: error },
        );
      }
      const info = await jsm.streams.add({
        name: stream,
        subjects: STREAM_SUBJECTS,
        storage: StorageType.File,
      });
      logger.info('stream created', { stream, subjects: STREAM_SUBJECTS });
      return info;
    }
  }

  /**
   * A stream the bridge owns (createStream) is brought to STREAM_SUBJECTS
   * at start, so a local stack created with the old `proxima.>` stops
   * swallowing live-read requests. A platform's stream is never changed;
   * one that captures the command subjects is logged at ERROR, since every
   * live read would then be answered by JetStream instead of the agent.
   */
  async #checkStreamSubjects(
    jsm: JetStreamManager,
    info: StreamInfo,
  ): Promise<StreamInfo> {
    const subjects = info.config.subjects ?? [];
    if (this.#o.createStream) {
      const same =
        subjects.length === STREAM_SUBJECTS.length &&
        STREAM_SUBJECTS.every((subject) => subjects.includes(subject));
      if (same) return info;
      const updated = await jsm.streams.update(info.config.name, {
        subjects: STREAM_SUBJECTS,
      });
      logger.info('stream subjects updated', {
        stream: info.config.name,
        from: subjects,
        to: STREAM_SUBJECTS,
      });
      return updated;
    }
    if (subjects.some((s) => subjectMatches(s, COMMAND_SUBJECT_PROBE))) {
      logger.error(
        'stream captures proxima.system.commands.*: live reads will fail',
        {
          stream: info.config.name,
          subjects,
        },
      );
    }
    return info;
  }

  /** Pulls while there is room; never holds more than maxInFlight. */
  async #pullLoop(): Promise<void> {
    const js = jetstream(this.#nc!);
    let consumer: Consumer | undefined;
    while (!this.#stopping) {
      if (consumer === undefined) {
        try {
          consumer = await js.consumers.get(this.#o.stream, this.#o.consumer);
        } catch (error) {
          this.#consumerReady = false;
          logger.warn('consumer lookup failed; retrying', {
            error: errorText(error),
          });
          await sleep(FETCH_RETRY_MS);
          continue;
        }
      }
      const room = this.#maxInFlight - this.#inFlight;
      if (room <= 0) {
        await new Promise<void>((resolve) => {
          this.#room = resolve;
        });
        this.#room = undefined;
        continue;
      }
      try {
        this.#fetch = await consumer.fetch({
          max_messages: room,
          expires: FETCH_EXPIRES_MS,
        });
        // stop() may have come while the pull request was being made.
        if (this.#stopping) this.#fetch.stop();
        for await (const msg of this.#fetch) {
          this.#hold(msg);
        }
      } catch (error) {
        if (this.#stopping) break;
        logger.warn('pull failed; retrying', { error: errorText(error) });
        if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) {
          this.#consumerReady = false;
          consumer = undefined;
        }
        await sleep(FETCH_RETRY_MS);
      } finally {
        this.#fetch = undefined;
      }
    }
  }

  #hold(msg: JsMsg): void {
    this.#inFlight++;
    this.#held.push({
      msg,
      seq: msg.seq,
      subject: msg.subject,
      deliveries: msg.info.deliveryCount,
    });
    this.#wake?.();
  }

  #release1(item: Held): void {
    item.settled = true;
    this.#inFlight--;
    this.#room?.();
  }

  async #sendLoop(): Promise<void> {
    for (;;) {
      if (this.#held.length === 0) {
        if (this.#stopping) {
          await this.#pump;
          if (this.#held.length === 0) return;
        } else {
          await new Promise<void>((resolve) => {
            this.#wake = resolve;
          });
          this.#wake = undefined;
          continue;
        }
      }
      // Let messages already in the socket land, so they share a batch.
      await yieldToIo();
      let batch: Held[] = [];
      try {
        batch = await this.#takeBatch();
        if (batch.length > 0) await this.#sendBatch(batch);
      } catch (error) {
        logger.error('batch failed unexpectedly', { error: errorText(error) });
        for (const item of batch) {
          if (!item.settled) this.#nak(item, 'unexpected error');
        }
      }
    }
  }

  /**
   * Takes what fits one SendMessageBatch (10 entries, 1 MiB in total), in
   * stream order; settles on the way what cannot or must not be sent now.
   */
  async #takeBatch(): Promise<Held[]> {
    this.#held.sort((a, b) => a.seq - b.seq);
    const batch: Held[] = [];
    // Older messages already in this batch go first; they do not hold it.
    const taken = new Set<number>();
    let bytes = 0;
    while (this.#held.length > 0 && batch.length < SQS_BATCH_ENTRIES) {
      const item = this.#held[0]!;
      if (item.encoded === undefined) {
        let refusal: string | undefined;
        try {
          refusal = this.#prepare(item);
        } catch (error) {
          this.#held.shift();
          const reason = `could not be encoded: ${errorText(error)}`;
          // No delivery follows the last: recorded, not lost.
          if (this.#isLastDelivery(item)) await this.#reject(item, reason);
          else this.#nak(item, reason);
          continue;
        }
        if (refusal !== undefined) {
          this.#held.shift();
          await this.#reject(item, refusal);
          continue;
        }
      }
      const blocker = this.#olderOutstanding(item, taken);
      if (blocker !== undefined) {
        if (!this.#isLastDelivery(item)) {
          this.#held.shift();
          this.#nak(item, 'held behind an older message of its group', {
            heldBehind: blocker,
          });
          continue;
        }
        // Out of order beats lost: the sync ignores an older snapshot that
        // arrives after a newer one.
        logger.warn('forwarding ahead of an older message on last delivery', {
          subject: item.subject,
          streamSeq: item.seq,
          heldBehind: blocker,
        });
      }
      const size = item.encoded!.message.size;
      if (batch.length > 0 && bytes + size > SQS_MAX_MESSAGE_BYTES) break;
      this.#held.shift();
      batch.push(item);
      taken.add(item.seq);
      bytes += size;
    }
    return batch;
  }

  /** Parses and encodes; returns a reason when the message can never go. */
  #prepare(item: Held): string | undefined {
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
      maxBytes: this.#o.maxBytes,
      bucket: this.#o.bucket,
      scope: this.#scope,
    });
    return undefined;
  }

  /** The oldest outstanding sequence of the item's group older than it. */
  #olderOutstanding(item: Held, taken: Set<number>): number | undefined {
    const seqs = this.#outstanding.get(item.group!);
    if (seqs === undefined) return undefined;
    const now = Date.now();
    let oldest: number | undefined;
    for (const [seq, until] of seqs) {
      if (now > until) {
        seqs.delete(seq);
      } else if (
        seq < item.seq &&
        !taken.has(seq) &&
        (oldest === undefined || seq < oldest)
      ) {
        oldest = seq;
      }
    }
    if (seqs.size === 0) this.#outstanding.delete(item.group!);
    return oldest;
  }

  #markOutstanding(item: Held): void {
    if (item.group === undefined) return;
    let seqs = this.#outstanding.get(item.group);
    if (seqs === undefined) {
      seqs = new Map();
      this.#outstanding.set(item.group, seqs);
    }
    seqs.set(item.seq, Date.now() + this.#backoff.maxMs + this.#ackWaitMs);
  }

  #clearOutstanding(item: Held): void {
    if (item.group === undefined) return;
    const seqs = this.#outstanding.get(item.group);
    seqs?.delete(item.seq);
    if (seqs?.size === 0) this.#outstanding.delete(item.group);
  }

  #isLastDelivery(item: Held): boolean {
    return this.#maxDeliver > 0 && item.deliveries >= this.#maxDeliver;
  }

  async #sendBatch(batch: Held[]): Promise<void> {
    const outcomes = new Map<Held, Outcome>();
    const failedGroups = new Set<string>();
    const heartbeat = setInterval(
      () => {
        for (const item of batch) item.msg.working();
      },
      Math.max(250, this.#ackWaitMs / 3),
    );
    try {
      await Promise.all(
        batch.map(async (item) => {
          const encoded = item.encoded!;
          if (encoded.kind !== 'claim-check') return;
          try {
            await this.#o.s3.send(
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
      // A group whose claim check failed sends none of its later messages.
      const entries: SendMessageBatchRequestEntry[] = [];
      const byId = new Map<string, Held>();
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
          MessageDeduplicationId: deduplicationId(this.#scope, item.seq),
        });
      }
      if (entries.length > 0) {
        try {
          const result = await this.#o.sqs.send(
            new SendMessageBatchCommand({
              QueueUrl: this.#o.queueUrl,
              Entries: entries,
            }),
          );
          for (const ok of result.Successful ?? []) {
            const item = byId.get(ok.Id ?? '');
            if (item !== undefined) {
              outcomes.set(item, {
                ok: true,
                sqsMessageId: ok.MessageId ?? '',
              });
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
      }

      const sent: SentEntry[] = [];
      for (const item of batch) {
        const outcome = outcomes.get(item);
        if (outcome?.ok === true) {
          sent.push({
            subject: item.subject,
            streamSeq: item.seq,
            sqsMessageId: outcome.sqsMessageId,
          });
        }
      }
      if (sent.length > 0 && this.#o.afterSend !== undefined) {
        try {
          await this.#o.afterSend(sent);
        } catch (error) {
          // As if the process died here: nothing is acked or naked; the
          // stream redelivers after ack_wait and the dedup id keeps one copy.
          logger.error('abandoned a batch after sending', {
            error: errorText(error),
          });
          for (const item of batch) this.#release1(item);
          return;
        }
      }
    } finally {
      clearInterval(heartbeat);
    }

    // Settle in stream order. After a failure in a group its later
    // messages are naked even if SQS took them: they come back behind the
    // failed one, and their dedup id keeps the queue at one copy.
    const groupFailed = new Set<string>();
    for (const item of batch) {
      const outcome = outcomes.get(item);
      const group = item.group!;
      if (outcome?.ok === true) {
        if (!groupFailed.has(group) || this.#isLastDelivery(item)) {
          this.#ack(item, outcome.sqsMessageId);
        } else {
          this.#nak(item, 'an older message of its group was not sent');
        }
        continue;
      }
      groupFailed.add(group);
      const error =
        outcome === undefined
          ? 'an older message of its group was not sent'
          : outcome.error;
      if (outcome !== undefined) this.#counts.sendFailures++;
      if (this.#isLastDelivery(item)) {
        await this.#reject(
          item,
          `not forwarded after ${item.deliveries} deliveries: ${error}`,
        );
      } else {
        this.#nak(item, error);
      }
    }
  }

  #ack(item: Held, sqsMessageId: string): void {
    this.#clearOutstanding(item);
    try {
      item.msg.ack();
      this.#counts.forwarded++;
      if (item.encoded?.kind === 'claim-check') this.#counts.claimChecked++;
      logger.info('inventory forwarded', {
        subject: item.subject,
        streamSeq: item.seq,
        sqsMessageId,
        claimCheck: item.encoded?.kind === 'claim-check',
        bytes: item.msg.data.byteLength,
      });
    } catch (error) {
      // Redelivered after ack_wait; the dedup id keeps the queue at one copy.
      logger.warn('ack failed', {
        subject: item.subject,
        streamSeq: item.seq,
        error: errorText(error),
      });
    }
    this.#release1(item);
  }

  #nak(item: Held, reason: string, extra: Record<string, unknown> = {}): void {
    const delayMs = Math.min(
      this.#backoff.baseMs * 2 ** Math.max(0, item.deliveries - 1),
      this.#backoff.maxMs,
    );
    this.#markOutstanding(item);
    try {
      item.msg.nak(delayMs);
    } catch (error) {
      logger.warn('nak failed', {
        streamSeq: item.seq,
        error: errorText(error),
      });
    }
    logger.warn('inventory not forwarded; will retry', {
      subject: item.subject,
      streamSeq: item.seq,
      deliveries: item.deliveries,
      retryInMs: delayMs,
      reason,
      ...extra,
    });
    this.#release1(item);
  }

  async #reject(item: Held, reason: string): Promise<void> {
    const info = { subject: item.subject, reason, streamSeq: item.seq };
    try {
      await this.#o.onReject?.(info);
    } catch (error) {
      if (!this.#isLastDelivery(item)) {
        logger.error('recording a rejection failed; will retry', {
          ...info,
          error: errorText(error),
        });
        this.#nak(item, 'rejection not recorded');
        return;
      }
      // JetStream will not deliver it again: it is terminated and counted
      // as rejected, and this error log is where its reason is kept.
      logger.error('rejection not recorded by the last delivery; terminated', {
        ...info,
        error: errorText(error),
      });
    }
    try {
      // Servers before 2.11 ignore a "+TERM" that carries a reason.
      item.msg.term(this.#termReason ? reason.slice(0, 200) : undefined);
    } catch (error) {
      logger.warn('term failed', {
        streamSeq: item.seq,
        error: errorText(error),
      });
    }
    this.#clearOutstanding(item);
    this.#counts.rejected++;
    logger.warn('inventory rejected', info);
    this.#release1(item);
  }

  async #pollStats(): Promise<void> {
    const nc = this.#nc;
    if (nc !== undefined && !nc.isClosed()) {
      try {
        const jsm = await jetstreamManager(nc, { checkAPI: false });
        const info = await jsm.consumers.info(this.#o.stream, this.#o.consumer);
        this.#lag = info.num_pending;
        this.#consumerReady = true;
      } catch (error) {
        this.#consumerReady = false;
        logger.warn('consumer info failed', { error: errorText(error) });
      }
    }
    this.#publishMetrics();
  }

  #publishMetrics(): void {
    const names = {
      forwarded: MetricName.bridgeForwarded,
      claimChecked: MetricName.bridgeClaimChecked,
      rejected: MetricName.bridgeRejected,
      sendFailures: MetricName.bridgeSendFailures,
    } as const;
    for (const key of Object.keys(names) as (keyof typeof names)[]) {
      const delta = this.#counts[key] - this.#published[key];
      if (delta > 0) metrics.addMetric(names[key], MetricUnit.Count, delta);
      this.#published[key] = this.#counts[key];
    }
    metrics.addMetric(
      MetricName.bridgeConsumerLag,
      MetricUnit.Count,
      this.#lag,
    );
    metrics.publishStoredMetrics();
  }
}

function atLeast(
  version: string | undefined,
  major: number,
  minor: number,
): boolean {
  const [a = 0, b = 0] = (version ?? '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
}

function isConnectOptions(
  value: NatsConnection | NatsConnectOptions,
): value is NatsConnectOptions {
  return typeof (value as NatsConnectOptions).url === 'string';
}

async function findConsumer(
  jsm: JetStreamManager,
  stream: string,
  consumer: string,
) {
  try {
    return await jsm.consumers.info(stream, consumer);
  } catch (error) {
    if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return undefined;
    throw error;
  }
}

function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
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
  throw new RejectedInventoryError(
    `unsupported Content-Encoding ${JSON.stringify(value.slice(0, 40))} (gzip or none)`,
  );
}

async function serveHealth(port: number, healthy: () => boolean) {
  const server = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/healthz') {
      const ok = healthy();
      res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ status: ok ? 'ok' : 'unavailable' }));
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({ error: { code: 'not_found', message: 'not found' } }),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, () => resolve());
  });
  return server;
}

function errorText(error: unknown): string {
  return error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether the NATS subject `pattern` (with `*` and `>`) matches `subject`. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length) return false;
    if (want[i] !== '*' && want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}
