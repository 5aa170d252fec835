/**
 * What a bridge is given, what it reports, and the errors it ends with.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { NatsConnection } from '@nats-io/transport-node';
import type { NatsTarget } from '../../nats-login.ts';

/** The stream, durable consumer and filter the bridge reads unless configured otherwise. */
export const DEFAULT_STREAM = 'EVENTS';
export const DEFAULT_CONSUMER = 'k8s-inventory-bridge';
export const DEFAULT_SUBJECT_FILTER = 'proxima.*.*.*.kubernetes';

export interface RejectInfo {
  subject: string;
  reason: string;
  streamSeq: number;
  /** The NATS message body's size as published. */
  sizeBytes: number;
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

/** Where to connect and how to log in (shared/nats-login.ts), and the client's name. */
export interface NatsConnectOptions extends NatsTarget {
  name?: string;
  /**
   * Keep trying a server that does not answer yet (default). False: the
   * first connect fails at once, for a one-shot run that must say so.
   */
  waitOnFirstConnect?: boolean;
}

export interface RetryBackoff {
  baseMs: number;
  maxMs: number;
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
  retryBackoff?: RetryBackoff;
  /** Messages held at once (pulled, not yet acked or naked). */
  maxInFlight?: number;
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

export function errorText(error: unknown): string {
  return error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
}
