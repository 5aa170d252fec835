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
 *
 * The parts: NATS setup (`nats-setup.ts`), health (`health.ts`), per-group
 * ordering (`group-order.ts`), sending a batch (`send-batch.ts`) and
 * settlement (`settlement.ts`); this file pulls, assembles batches and runs
 * the bridge's life.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setImmediate as yieldToIo } from 'node:timers/promises';
import {
  type Consumer,
  type ConsumerMessages,
  JetStreamApiCodes,
  type JsMsg,
  jetstream,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { faultPoint } from '../../faults.ts';
import { endNatsConnection } from '../../nats-login.ts';
import { logger } from '../../observability/logger.ts';
import {
  MetricName,
  MetricUnit,
  metrics,
} from '../../observability/metrics.ts';
import { SQS_MAX_MESSAGE_BYTES } from '../queue-message.ts';
import { GroupOrder } from './group-order.ts';
import { closeHealth, healthAddressOf, serveHealth } from './health.ts';
import { type HeldMessage, holdMessage } from './held-message.ts';
import {
  acceptsTermReason,
  connectNats,
  consumerPending,
  isApiError,
  isConnectOptions,
  prepareConsumer,
} from './nats-setup.ts';
import {
  BridgeConnectionLostError,
  type BridgeOptions,
  type BridgeStats,
  errorText,
  type SentEntry,
} from './options.ts';
import {
  keepingInProgress,
  prepareForQueue,
  type QueueTarget,
  SQS_BATCH_ENTRIES,
  sendBatch,
  workingOn,
} from './send-batch.ts';
import { Settlement, type SettlementCounts } from './settlement.ts';

export {
  connectNats,
  DEFAULT_ACK_WAIT_MS,
  DEFAULT_MAX_DELIVER,
  STREAM_SUBJECTS,
} from './nats-setup.ts';
export {
  BridgeConnectionLostError,
  type BridgeOptions,
  BridgeSetupError,
  type BridgeStats,
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
  type NatsConnectOptions,
  type RejectInfo,
  type SentEntry,
} from './options.ts';

/** A client's pull expiry; also bounds how long stop() waits for a pull. */
const FETCH_EXPIRES_MS = 10_000;
const FETCH_RETRY_MS = 1_000;
/** Past the ack wait, for the server's redelivery timer to have fired. */
const REDELIVERY_MARGIN_MS = 1_000;

export class Bridge {
  readonly #options: BridgeOptions;
  readonly #maxInFlight: number;
  readonly #order = new GroupOrder();
  readonly #settlement: Settlement;
  #target: QueueTarget;
  #nc: NatsConnection | undefined;
  #ownsConnection = false;
  #fetch: ConsumerMessages | undefined;
  /** Pulled and waiting to be batched, in arrival order. */
  #waiting: HeldMessage[] = [];
  #inFlight = 0;
  #wakeSender: (() => void) | undefined;
  #wakePuller: (() => void) | undefined;
  #running = false;
  #stopping = false;
  #pulling: Promise<void> | undefined;
  #sending: Promise<void> | undefined;
  #statsTimer: NodeJS.Timeout | undefined;
  #heartbeat: NodeJS.Timeout | undefined;
  /** Until then no pull: what a dead process held is redelivered first. */
  #firstPullAt = 0;
  #wakeFromWait: (() => void) | undefined;
  #health: Server | undefined;
  #stopped: Promise<void> | undefined;
  #closed: Promise<void>;
  #settleClosed!: { resolve: () => void; reject: (e: Error) => void };
  #published: SettlementCounts = {
    forwarded: 0,
    claimChecked: 0,
    rejected: 0,
    sendFailures: 0,
  };
  #lag = 0;
  #connected = false;
  #consumerReady = false;

  constructor(options: BridgeOptions) {
    this.#options = options;
    this.#maxInFlight = options.maxInFlight ?? 20;
    this.#settlement = new Settlement(
      this.#order,
      options.retryBackoff ?? { baseMs: 1_000, maxMs: 60_000 },
      options.onReject,
      () => {
        this.#inFlight--;
        this.#wakePuller?.();
      },
    );
    this.#target = {
      sqs: options.sqs,
      s3: options.s3,
      queueUrl: options.queueUrl,
      bucket: options.bucket,
      maxBytes: options.maxBytes,
      scope: options.stream,
    };
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
    if (this.#options.healthPort !== undefined) {
      this.#health = await serveHealth(this.#options.healthPort, () =>
        this.healthy(),
      );
    }
    try {
      const given = this.#options.nats;
      if (isConnectOptions(given)) {
        this.#nc = await connectNats(given);
        this.#ownsConnection = true;
      } else {
        this.#nc = given;
      }
      this.#connected = !this.#nc.isClosed();
      this.#watchConnection(this.#nc);
      const settings = await prepareConsumer(this.#nc, this.#options);
      this.#target = { ...this.#target, scope: settings.scope };
      this.#settlement.limits = {
        maxDeliver: settings.maxDeliver,
        ackWaitMs: settings.ackWaitMs,
        termReason: acceptsTermReason(this.#nc),
      };
      this.#lag = settings.pending;
      this.#consumerReady = true;
      // Messages delivered and not acked belong to a process that died (or
      // another bridge): they come back only after the ack wait, and a pull
      // before then would take the newer snapshots of their groups first.
      // JetStream serves due redeliveries before new messages, so waiting
      // out one ack wait keeps each agent's order across a restart.
      if (settings.ackPending > 0) {
        this.#firstPullAt =
          Date.now() + settings.ackWaitMs + REDELIVERY_MARGIN_MS;
        logger.info('waiting for the messages a previous bridge held', {
          ackPending: settings.ackPending,
          waitMs: settings.ackWaitMs + REDELIVERY_MARGIN_MS,
        });
      }
    } catch (error) {
      // Not a lost connection: the drain below is ours.
      this.#stopping = true;
      await this.#release();
      throw error;
    }
    this.#running = true;
    this.#pulling = this.#pullLoop();
    this.#sending = this.#sendLoop();
    this.#statsTimer = setInterval(
      () => void this.#pollStats(),
      this.#options.statsIntervalMs ?? 15_000,
    );
    this.#statsTimer.unref();
    // Pulled messages waiting for their batch are kept alive as well: with
    // a short ack wait they would otherwise be redelivered while held.
    this.#heartbeat = setInterval(
      () => {
        for (const item of this.#waiting) workingOn(item);
      },
      Math.max(250, this.#settlement.limits.ackWaitMs / 3),
    );
    this.#heartbeat.unref();
    logger.info('bridge started', {
      stream: this.#options.stream,
      consumer: this.#options.consumer,
      queueUrl: this.#options.queueUrl,
      maxBytes: this.#options.maxBytes,
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
      ...this.#settlement.counts,
      consumerLag: this.#lag,
      connected: this.#connected,
      consumerReady: this.#consumerReady,
    };
  }

  /** Where /healthz listens, when it does. */
  healthAddress(): AddressInfo | undefined {
    return healthAddressOf(this.#health);
  }

  async #shutdown(): Promise<void> {
    await this.#finishHeld();
    if (this.#connected) {
      await this.#pollStats();
    } else {
      this.#publishMetrics();
    }
    await this.#release();
    logger.info('bridge stopped', { ...this.#settlement.counts });
    this.#settleClosed.resolve();
  }

  /** Stops pulling and waits until every held message is settled. */
  async #finishHeld(): Promise<void> {
    this.#stopping = true;
    this.#fetch?.stop();
    this.#wakeFromWait?.();
    this.#wakePuller?.();
    this.#wakeSender?.();
    await this.#pulling;
    await this.#sending;
    this.#running = false;
  }

  async #release(): Promise<void> {
    if (this.#statsTimer !== undefined) clearInterval(this.#statsTimer);
    this.#statsTimer = undefined;
    if (this.#heartbeat !== undefined) clearInterval(this.#heartbeat);
    this.#heartbeat = undefined;
    const health = this.#health;
    this.#health = undefined;
    if (health !== undefined) await closeHealth(health);
    const nc = this.#nc;
    // Draining flushes the acks still in the socket buffer.
    if (this.#ownsConnection && nc !== undefined) {
      await endNatsConnection(nc, this.#connected);
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
        await this.#finishHeld();
        await this.#release();
        this.#settleClosed.reject(lost);
      })();
    });
  }

  /** Pulls while there is room; never holds more than maxInFlight. */
  async #pullLoop(): Promise<void> {
    const js = jetstream(this.#nc!);
    let consumer: Consumer | undefined;
    const waitMs = this.#firstPullAt - Date.now();
    if (waitMs > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, waitMs);
        this.#wakeFromWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.#wakeFromWait = undefined;
    }
    while (!this.#stopping) {
      if (consumer === undefined) {
        try {
          consumer = await js.consumers.get(
            this.#options.stream,
            this.#options.consumer,
          );
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
          this.#wakePuller = resolve;
        });
        this.#wakePuller = undefined;
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
    this.#waiting.push(holdMessage(msg));
    this.#wakeSender?.();
  }

  async #sendLoop(): Promise<void> {
    for (;;) {
      if (this.#waiting.length === 0) {
        if (this.#stopping) {
          await this.#pulling;
          if (this.#waiting.length === 0) return;
        } else {
          await new Promise<void>((resolve) => {
            this.#wakeSender = resolve;
          });
          this.#wakeSender = undefined;
          continue;
        }
      }
      // Let messages already in the socket land, so they share a batch.
      await yieldToIo();
      let batch: HeldMessage[] = [];
      try {
        batch = await this.#takeBatch();
        if (batch.length > 0) await this.#forward(batch);
      } catch (error) {
        logger.error('batch failed unexpectedly', { error: errorText(error) });
        for (const item of batch) {
          if (!item.settled) this.#settlement.nak(item, 'unexpected error');
        }
      }
    }
  }

  /**
   * Takes what fits one SendMessageBatch (10 entries, 1 MiB in total), in
   * stream order; settles on the way what cannot or must not be sent now.
   */
  async #takeBatch(): Promise<HeldMessage[]> {
    const settlement = this.#settlement;
    this.#waiting.sort((a, b) => a.seq - b.seq);
    const batch: HeldMessage[] = [];
    // Older messages already in this batch go first; they do not hold it.
    const taken = new Set<number>();
    let bytes = 0;
    while (this.#waiting.length > 0 && batch.length < SQS_BATCH_ENTRIES) {
      const item = this.#waiting[0]!;
      if (item.encoded === undefined) {
        let refusal: string | undefined;
        try {
          refusal = prepareForQueue(item, this.#target);
        } catch (error) {
          this.#waiting.shift();
          const reason = `could not be encoded: ${errorText(error)}`;
          // No delivery follows the last: recorded, not lost.
          if (settlement.isLastDelivery(item)) {
            await settlement.reject(item, reason);
          } else {
            settlement.nak(item, reason);
          }
          continue;
        }
        if (refusal !== undefined) {
          this.#waiting.shift();
          await settlement.reject(item, refusal);
          continue;
        }
      }
      const blocker = this.#order.olderOutstanding(
        item.group!,
        item.seq,
        taken,
      );
      if (blocker !== undefined) {
        if (!settlement.isLastDelivery(item)) {
          this.#waiting.shift();
          settlement.nak(item, 'held behind an older message of its group', {
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
      this.#waiting.shift();
      batch.push(item);
      taken.add(item.seq);
      bytes += size;
    }
    return batch;
  }

  /** Sends the batch, then acks, naks or terminates each message. */
  async #forward(batch: HeldMessage[]): Promise<void> {
    const settlement = this.#settlement;
    const outcomes = await keepingInProgress(
      batch,
      settlement.limits.ackWaitMs,
      async () => {
        const outcomes = await sendBatch(batch, this.#target);
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
        if (sent.length > 0) {
          try {
            // A test's crash or stall between the send and the acks.
            await faultPoint('bridge.after-send', { sent });
          } catch (error) {
            // As if the process died here: nothing is acked or naked; the
            // stream redelivers after ack_wait and the dedup id keeps one copy.
            logger.error('abandoned a batch after sending', {
              error: errorText(error),
            });
            return undefined;
          }
        }
        return outcomes;
      },
    );
    if (outcomes === undefined) {
      for (const item of batch) settlement.abandon(item);
      return;
    }
    await settlement.settleSent(batch, outcomes);
  }

  async #pollStats(): Promise<void> {
    const nc = this.#nc;
    if (nc !== undefined && !nc.isClosed()) {
      try {
        this.#lag = await consumerPending(
          nc,
          this.#options.stream,
          this.#options.consumer,
        );
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
    const counts = this.#settlement.counts;
    for (const key of Object.keys(names) as (keyof typeof names)[]) {
      const delta = counts[key] - this.#published[key];
      if (delta > 0) metrics.addMetric(names[key], MetricUnit.Count, delta);
      this.#published[key] = counts[key];
    }
    metrics.addMetric(
      MetricName.bridgeConsumerLag,
      MetricUnit.Count,
      this.#lag,
    );
    metrics.publishStoredMetrics();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
