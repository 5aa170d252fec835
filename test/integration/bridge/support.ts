/**
 * What the bridge's integration tests share: a real nats-server and fauxqs
 * per test, a bridge wired to them, publishing, and polling with a bound.
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Message } from '@aws-sdk/client-sqs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { headers, type NatsConnection } from '@nats-io/transport-node';
import {
  Bridge,
  type BridgeOptions,
} from '../../../shared/ingest/bridge/index.ts';
import { connectNats } from '../../../shared/ingest/bridge/nats-setup.ts';
import {
  decodeQueuedInventory,
  type QueuedInventory,
  toQueuedRecord,
} from '../../../shared/ingest/queue-message.ts';
import { eventually as eventuallyWithin } from '../../helpers/eventually.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { drainQueue, startSqs, type TestSqs } from '../../helpers/sqs.ts';

export const STREAM = 'EVENTS';
export const CONSUMER = 'k8s-inventory-bridge';
export const FILTER = 'proxima.*.*.*.kubernetes';

export function inventorySubject(
  client = 'acme',
  env = 'prod',
  agent: string = randomUUID(),
): string {
  return `proxima.${client}.${env}.${agent}.kubernetes`;
}

/** An inventory-shaped JSON body of about `bytes` bytes. */
export function inventoryBody(bytes: number, tag = 'x'): Buffer {
  const pods: unknown[] = [];
  const doc = {
    type: 'kubernetes',
    schema_version: 1,
    tag,
    timestamp: new Date().toISOString(),
    cluster: { name: 'test' },
    pods,
  };
  let size = Buffer.byteLength(JSON.stringify(doc));
  for (let i = 0; size < bytes; i++) {
    const pod = {
      namespace: 'default',
      name: `pod-${i}-${'a'.repeat(40)}`,
      uid: randomUUID(),
      labels: { app: `app-${i % 50}`, 'pod-template-hash': 'abc123' },
      phase: 'Running',
    };
    pods.push(pod);
    size += Buffer.byteLength(JSON.stringify(pod)) + 1;
  }
  return Buffer.from(JSON.stringify(doc));
}

export interface Stack {
  nats: TestNatsServer;
  sqs: TestSqs;
  nc: NatsConnection;
  bridges: Bridge[];
  startBridge(overrides?: Partial<BridgeOptions>): Promise<Bridge>;
  publish(
    subject: string,
    body: Uint8Array,
    contentEncoding?: string,
  ): Promise<number>;
  /** Every queued message, read and deleted, once all sends are done. */
  drain(): Promise<Message[]>;
  decode(message: Message): Promise<QueuedInventory>;
  consumerInfo(): ReturnType<
    Awaited<ReturnType<typeof jetstreamManager>>['consumers']['info']
  >;
  stop(): Promise<void>;
}

/**
 * A nats-server, fauxqs, and a publishing connection. With `creds` the
 * server runs in operator mode: the publisher logs in as the agent does
 * (connectNats, its `.creds` content) and each bridge with `.creds` of its
 * own, given as a file's path. With `tls` the server requires TLS with a
 * certificate of the run's own authority, which the publisher trusts by
 * its file as an agent does (NATS_CA).
 */
export async function startStack(
  options: { maxMessageBytes?: number; creds?: boolean; tls?: boolean } = {},
): Promise<Stack> {
  const nats = await startNatsServer({
    creds: options.creds ?? false,
    tls: options.tls ?? false,
  });
  const sqs = await startSqs(options);
  const publisherCreds = await nats.userCreds('test-publisher');
  const nc = await connectNats({
    url: nats.url,
    ...(publisherCreds ? { creds: publisherCreds } : {}),
    ...(nats.ca ? { ca: nats.ca.file } : {}),
    name: 'test-publisher',
    waitOnFirstConnect: false,
  });
  const credsDir = options.creds
    ? await mkdtemp(join(tmpdir(), 'bridge-creds-'))
    : undefined;
  const bridges: Bridge[] = [];
  const maxBytes = options.maxMessageBytes ?? 1024 * 1024;
  const stack: Stack = {
    nats,
    sqs,
    nc,
    bridges,
    async startBridge(overrides = {}) {
      const creds = await nats.userCreds(`bridge-${bridges.length + 1}`);
      let credsFile: string | undefined;
      if (creds !== undefined && credsDir !== undefined) {
        credsFile = join(credsDir, `bridge-${bridges.length + 1}.creds`);
        await writeFile(credsFile, creds, { mode: 0o600 });
      }
      const bridge = new Bridge({
        nats: {
          url: nats.url,
          ...(credsFile ? { creds: credsFile } : {}),
          ...(nats.ca ? { ca: nats.ca.file } : {}),
        },
        stream: STREAM,
        consumer: CONSUMER,
        subjectFilter: FILTER,
        createStream: true,
        sqs: sqs.sqs,
        s3: sqs.s3,
        queueUrl: sqs.queueUrl,
        bucket: sqs.bucket,
        maxBytes,
        statsIntervalMs: 500,
        retryBackoff: { baseMs: 100, maxMs: 1_000 },
        ...overrides,
      });
      bridges.push(bridge);
      await bridge.start();
      return bridge;
    },
    async publish(subject, body, contentEncoding) {
      const js = jetstream(nc);
      const h = headers();
      if (contentEncoding !== undefined) {
        h.set('Content-Encoding', contentEncoding);
      }
      const ack = await js.publish(subject, body, { headers: h });
      return ack.seq;
    },
    drain: () => drainQueue(sqs.sqs, sqs.queueUrl),
    decode: (message) => decodeQueuedInventory(toQueuedRecord(message), sqs.s3),
    async consumerInfo() {
      const jsm = await jetstreamManager(nc);
      return jsm.consumers.info(STREAM, CONSUMER);
    },
    async stop() {
      for (const bridge of bridges) await bridge.stop();
      if (!nc.isClosed()) await nc.close();
      await sqs.stop();
      await nats.stop();
      if (credsDir) await rm(credsDir, { recursive: true, force: true });
    },
  };
  return stack;
}

/** Bounds for a loaded two-core machine, far above a normal run's seconds. */
export const WAIT_MS = 60_000;
export const TEST_TIMEOUT_MS = 180_000;

/** {@link eventuallyWithin} with the bridge tests' bound. */
export function eventually<T>(
  what: string,
  probe: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = WAIT_MS,
): Promise<T> {
  return eventuallyWithin(what, probe, timeoutMs);
}

/** The stream sequence a queued message carries. */
export function queuedSeq(message: Message): number {
  return Number(message.MessageAttributes?.['nats-stream-seq']?.StringValue);
}
