/**
 * Publishing one inventory: gzipped JSON (`Content-Encoding: gzip`) on the
 * agent's subject through JetStream, done once the stream acked it.
 *
 * The oversized rule (spec, "Workload Spec Facts"): the whole inventory is
 * one NATS message, so one over the server's `max_payload` is sent again
 * without `spec_facts` on any workload (that sync records no workload
 * changes, the rest arrives); still too large, nothing is published. Either
 * way a WARN and one count on
 * `proxima_collector_inventory_too_large_total{outcome}` (`spec_facts_dropped`
 * when the factless message went out, `inventory_dropped` when nothing did).
 * `proxima_collector_inventory_payload_bytes` is the encoded size of the
 * full inventory, so the headroom shows before the limit is reached.
 *
 * The size is checked before sending, by the same sum nats.js checks
 * (payload plus encoded headers against the INFO's `max_payload`), so an
 * oversized message never reaches the wire.
 *
 * A failed publish (no ack in time, the stream not there yet, the
 * connection reconnecting) is retried with exponential backoff under one
 * `Nats-Msg-Id`, so a retry whose first try did land is deduplicated by the
 * stream instead of stored twice.
 */
import { gzipSync } from 'node:zlib';
import { jetstream } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import type { logger } from '../observability/logger.ts';
import type { InventoryInput } from '../wire/inventory.ts';
import type { AgentMetrics } from './metrics.ts';

export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 5,
  baseMs: 1_000,
  maxMs: 30_000,
};

export interface PublishOptions {
  nc: NatsConnection;
  subject: string;
  metrics: AgentMetrics;
  logger: Pick<typeof logger, 'warn'>;
  retry?: RetryPolicy;
  /** Per attempt: how long to wait for the stream's ack. */
  ackTimeoutMs?: number;
}

export type PublishResult =
  | {
      published: true;
      stream: string;
      seq: number;
      duplicate: boolean;
      /** Bytes sent (gzipped). */
      bytes: number;
      /** Uncompressed JSON bytes. */
      jsonBytes: number;
      specFactsDropped: boolean;
    }
  | { published: false; bytes: number; maxPayload: number };

export class PublishError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PublishError';
  }
}

export interface EncodedInventory {
  body: Buffer;
  jsonBytes: number;
}

/** The message as it travels: JSON, gzipped. Same message, same bytes. */
export function encodeInventory(message: InventoryInput): EncodedInventory {
  const json = Buffer.from(JSON.stringify(message));
  return { body: gzipSync(json), jsonBytes: json.byteLength };
}

/** The message with no workload carrying `spec_facts` (absent: unknown). */
export function withoutSpecFacts(message: InventoryInput): InventoryInput {
  if (!message.workloads) return message;
  return {
    ...message,
    workloads: message.workloads.map(({ spec_facts: _, ...row }) => row),
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Publishes one inventory under the oversized rule; throws PublishError when no ack came. */
export async function publishInventory(
  message: InventoryInput,
  options: PublishOptions,
): Promise<PublishResult> {
  const { nc, metrics, logger } = options;
  // One id for every try of this snapshot: the stream drops a repeat. Set
  // here, not left to the client, so the size check counts it.
  const msgID = `${message.agent_id}:${message.timestamp}`;
  const h = headers();
  h.set('Content-Encoding', 'gzip');
  h.set('Nats-Msg-Id', msgID);
  // What nats.js adds to the payload's length before its own max_payload
  // check; `encode` is on the implementation, not the MsgHdrs interface.
  const headerBytes = (h as unknown as { encode(): Uint8Array }).encode()
    .byteLength;
  const maxPayload = nc.info?.max_payload ?? Number.POSITIVE_INFINITY;
  const fits = (e: EncodedInventory) =>
    e.body.byteLength + headerBytes <= maxPayload;

  let encoded = encodeInventory(message);
  metrics.inventoryPayloadBytes.set(encoded.body.byteLength);
  let specFactsDropped = false;
  if (!fits(encoded)) {
    const full = encoded.body.byteLength;
    encoded = encodeInventory(withoutSpecFacts(message));
    if (!fits(encoded)) {
      metrics.inventoryTooLarge.inc({ outcome: 'inventory_dropped' });
      logger.warn(
        'inventory over the NATS max_payload even without spec facts: nothing published',
        {
          bytes: full,
          bytesWithoutSpecFacts: encoded.body.byteLength,
          maxPayload,
          outcome: 'inventory_dropped',
        },
      );
      return { published: false, bytes: encoded.body.byteLength, maxPayload };
    }
    specFactsDropped = true;
    metrics.inventoryTooLarge.inc({ outcome: 'spec_facts_dropped' });
    logger.warn(
      'inventory over the NATS max_payload: publishing it without spec facts (this sync records no workload changes)',
      {
        bytes: full,
        bytesWithoutSpecFacts: encoded.body.byteLength,
        maxPayload,
        outcome: 'spec_facts_dropped',
      },
    );
  }

  const retry = options.retry ?? DEFAULT_RETRY;
  const js = jetstream(nc);
  let lastError: unknown;
  for (let attempt = 1; attempt <= retry.attempts; attempt += 1) {
    try {
      const ack = await js.publish(options.subject, encoded.body, {
        headers: h,
        msgID,
        timeout: options.ackTimeoutMs ?? 30_000,
      });
      metrics.inventoriesPublished.inc();
      metrics.lastPublishedSeconds.set(Date.now() / 1000);
      return {
        published: true,
        stream: ack.stream,
        seq: ack.seq,
        duplicate: ack.duplicate,
        bytes: encoded.body.byteLength,
        jsonBytes: encoded.jsonBytes,
        specFactsDropped,
      };
    } catch (error) {
      lastError = error;
      if (attempt === retry.attempts || nc.isClosed()) break;
      const delay = Math.min(retry.maxMs, retry.baseMs * 2 ** (attempt - 1));
      logger.warn('inventory publish failed; retrying', {
        subject: options.subject,
        attempt,
        retryInMs: delay,
        error: (error as Error).message,
      });
      await sleep(delay);
    }
  }
  throw new PublishError(
    `the stream did not acknowledge the inventory on ${options.subject}: ${(lastError as Error)?.message ?? 'unknown error'}`,
    { cause: lastError },
  );
}
