/**
 * Settlement: every held message ends acked (SQS took it), naked (try again
 * later, with a growing delay) or terminated (it can never go; recorded
 * through `onReject`, logged and counted). Nothing is acked that was not
 * delivered.
 */
import { logger } from '../../observability/logger.ts';
import type { GroupOrder } from './group-order.ts';
import type { HeldMessage } from './held-message.ts';
import { type BridgeOptions, errorText, type RetryBackoff } from './options.ts';

/** What one message's send came to. */
export type SendOutcome =
  | { ok: true; sqsMessageId: string }
  | { ok: false; error: string };

export interface SettlementCounts {
  forwarded: number;
  claimChecked: number;
  rejected: number;
  sendFailures: number;
}

export interface ConsumerLimits {
  /** The consumer's max_deliver (-1: unlimited). */
  maxDeliver: number;
  ackWaitMs: number;
  /** The server keeps a terminated message's reason. */
  termReason: boolean;
}

export class Settlement {
  readonly counts: SettlementCounts = {
    forwarded: 0,
    claimChecked: 0,
    rejected: 0,
    sendFailures: 0,
  };
  limits: ConsumerLimits = {
    maxDeliver: -1,
    ackWaitMs: 30_000,
    termReason: false,
  };

  constructor(
    private readonly order: GroupOrder,
    private readonly backoff: RetryBackoff,
    private readonly onReject: BridgeOptions['onReject'],
    /** Called once per message when it leaves the bridge's hands. */
    private readonly released: (item: HeldMessage) => void,
  ) {}

  /** JetStream will not deliver this message again. */
  isLastDelivery(item: HeldMessage): boolean {
    return (
      this.limits.maxDeliver > 0 && item.deliveries >= this.limits.maxDeliver
    );
  }

  ack(item: HeldMessage, sqsMessageId: string): void {
    this.#forget(item);
    try {
      item.msg.ack();
      this.counts.forwarded++;
      if (item.encoded?.kind === 'claim-check') this.counts.claimChecked++;
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
    this.release(item);
  }

  nak(
    item: HeldMessage,
    reason: string,
    extra: Record<string, unknown> = {},
  ): void {
    const delayMs = Math.min(
      this.backoff.baseMs * 2 ** Math.max(0, item.deliveries - 1),
      this.backoff.maxMs,
    );
    if (item.group !== undefined) {
      this.order.markNaked(
        item.group,
        item.seq,
        Date.now() + this.backoff.maxMs + this.limits.ackWaitMs,
      );
    }
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
    this.release(item);
  }

  /** Records why, then terminates; a failed record naks unless this is the last delivery. */
  async reject(item: HeldMessage, reason: string): Promise<void> {
    const info = { subject: item.subject, reason, streamSeq: item.seq };
    try {
      await this.onReject?.({ ...info, sizeBytes: item.msg.data.byteLength });
    } catch (error) {
      if (!this.isLastDelivery(item)) {
        logger.error('recording a rejection failed; will retry', {
          ...info,
          error: errorText(error),
        });
        this.nak(item, 'rejection not recorded');
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
      item.msg.term(this.limits.termReason ? reason.slice(0, 200) : undefined);
    } catch (error) {
      logger.warn('term failed', {
        streamSeq: item.seq,
        error: errorText(error),
      });
    }
    this.#forget(item);
    this.counts.rejected++;
    logger.warn('inventory rejected', info);
    this.release(item);
  }

  /**
   * Settles a sent batch in stream order. After a failure in a group its
   * later messages are naked even if SQS took them: they come back behind
   * the failed one, and their dedup id keeps the queue at one copy.
   */
  async settleSent(
    batch: readonly HeldMessage[],
    outcomes: ReadonlyMap<HeldMessage, SendOutcome>,
  ): Promise<void> {
    const groupFailed = new Set<string>();
    for (const item of batch) {
      const outcome = outcomes.get(item);
      const group = item.group!;
      if (outcome?.ok === true) {
        if (!groupFailed.has(group) || this.isLastDelivery(item)) {
          this.ack(item, outcome.sqsMessageId);
        } else {
          this.nak(item, 'an older message of its group was not sent');
        }
        continue;
      }
      groupFailed.add(group);
      const error =
        outcome === undefined
          ? 'an older message of its group was not sent'
          : outcome.error;
      if (outcome !== undefined) this.counts.sendFailures++;
      if (this.isLastDelivery(item)) {
        await this.reject(
          item,
          `not forwarded after ${item.deliveries} deliveries: ${error}`,
        );
      } else {
        this.nak(item, error);
      }
    }
  }

  /**
   * Neither acked nor naked, as if the process died: the stream redelivers
   * it after ack_wait, and its dedup id keeps the queue at one copy.
   */
  abandon(item: HeldMessage): void {
    this.release(item);
  }

  private release(item: HeldMessage): void {
    item.settled = true;
    this.released(item);
  }

  #forget(item: HeldMessage): void {
    if (item.group !== undefined) this.order.settled(item.group, item.seq);
  }
}
