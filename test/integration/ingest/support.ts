/**
 * The end-to-end ingest world for a test: a real nats-server, fauxqs (behind
 * a relay that can cut it off), a database of the test's own, and the local
 * stack's ingest wiring (infra/local/ingest.ts: the bridge, the poller and
 * the real sync handler). Publishing goes through JetStream like an agent.
 */
import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import {
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
  type Ingest,
  type IngestOptions,
  startIngest,
} from '../../../infra/local/ingest.ts';
import { query, queryMaybeOne } from '../../../shared/db/pool.ts';
import {
  Bridge,
  type BridgeOptions,
} from '../../../shared/ingest/bridge/index.ts';
import type { ProcessedRecord } from '../../../shared/ingest/process-record.ts';
import { recordRejection } from '../../../shared/ingest/rejections.ts';
import { setSyncDeps } from '../../../shared/ingest/sync-deps.ts';
import type { InventoryInput } from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import {
  createS3Client,
  createSqsClient,
  type OutageSwitch,
  queueDepth,
  startOutageSwitch,
  startSqs,
  type TestSqs,
} from '../../helpers/sqs.ts';

export interface World {
  database: TestDatabase;
  tenant: Tenant;
  nats: TestNatsServer;
  sqs: TestSqs;
  /** Between every client and fauxqs: cut() makes SQS and S3 unreachable. */
  relay: OutageSwitch;
  sqsClient: SQSClient;
  s3Client: S3Client;
  ingest: Ingest;
  /** Every record the sync handler settled, in order. */
  processed: ProcessedRecord[];
  publisher: NatsConnection;
  subjectFor(agentId: string, client?: string, env?: string): string;
  publish(
    subject: string,
    message: InventoryInput | Buffer | string,
    options?: { gzip?: boolean },
  ): Promise<number>;
  /** A second bridge on the same stream and queue (a restarted process). */
  startBridge(overrides?: Partial<BridgeOptions>): Promise<Bridge>;
  clusterOf(agentId: string): Promise<ClusterRow | undefined>;
  rejections(): Promise<RejectionRow[]>;
  /** Stream messages not yet acked or still pending for the bridge. */
  streamBacklog(): Promise<number>;
  queueDepth(): Promise<number>;
  stop(): Promise<void>;
}

export interface ClusterRow extends Record<string, unknown> {
  id: string;
  name: string;
  last_snapshot_at: Date;
  node_count: number;
  workload_count: number;
  updated_at: Date;
}

export interface RejectionRow extends Record<string, unknown> {
  stage: string;
  subject: string;
  stream_seq: number | null;
  client_slug: string | null;
  env_slug: string | null;
  agent_id: string | null;
  reason: string;
  size_bytes: number | null;
}

export const FAST_BRIDGE: Partial<BridgeOptions> = {
  retryBackoff: { baseMs: 100, maxMs: 1_000 },
  statsIntervalMs: 500,
  ackWaitMs: 3_000,
};

export async function startWorld(
  options: {
    maxMessageBytes?: number;
    bridge?: Partial<BridgeOptions>;
    poller?: IngestOptions['poller'];
    /** The queue's maxReceiveCount (then a dead-letter queue), as in AWS. */
    maxReceiveCount?: number;
    /** Where a committed sync writes its series (none by default). */
    seriesWriter?: IngestOptions['seriesWriter'];
  } = {},
): Promise<World> {
  const database = await createTestDatabase();
  const tenant = await createTenant(database.db);
  const nats = await startNatsServer();
  const sqs = await startSqs({
    ...(options.maxMessageBytes === undefined
      ? {}
      : { maxMessageBytes: options.maxMessageBytes }),
    ...(options.maxReceiveCount === undefined
      ? {}
      : { maxReceiveCount: options.maxReceiveCount }),
  });
  const relay = await startOutageSwitch(sqs.endpoint);
  const sqsClient = createSqsClient(relay.endpoint);
  const s3Client = createS3Client(relay.endpoint);
  const processed: ProcessedRecord[] = [];
  const maxBytes = options.maxMessageBytes ?? 1024 * 1024;
  // The sync and the bridge's recorder each as its login in AWS.
  const ingest = await startIngest({
    db: database.as('sync').db,
    bridgeDb: database.as('bridge').db,
    nats: { url: nats.url },
    sqs: sqsClient,
    s3: s3Client,
    queueUrl: sqs.queueUrl,
    bucket: sqs.bucket,
    maxBytes,
    ...(options.maxReceiveCount === undefined
      ? {}
      : { maxReceives: options.maxReceiveCount }),
    bridge: { ...FAST_BRIDGE, ...options.bridge },
    poller: {
      concurrency: 2,
      waitTimeSeconds: 1,
      retryDelaySeconds: 1,
      ...options.poller,
    },
    onProcessed: (info) => processed.push(info),
    ...(options.seriesWriter ? { seriesWriter: options.seriesWriter } : {}),
  });
  const publisher = await connect({ servers: nats.url, name: 'test-agent' });
  const extraBridges: Bridge[] = [];

  const world: World = {
    database,
    tenant,
    nats,
    sqs,
    relay,
    sqsClient,
    s3Client,
    ingest,
    processed,
    publisher,
    subjectFor: (agentId, client = tenant.clientSlug, env = tenant.envSlug) =>
      `proxima.${client}.${env}.${agentId}.kubernetes`,
    async publish(subject, message, { gzip = false } = {}) {
      const raw =
        typeof message === 'string'
          ? Buffer.from(message)
          : Buffer.isBuffer(message)
            ? message
            : Buffer.from(JSON.stringify(message));
      const h = headers();
      if (gzip) h.set('Content-Encoding', 'gzip');
      const ack = await jetstream(publisher).publish(
        subject,
        gzip ? gzipSync(raw) : raw,
        { headers: h, timeout: 30_000 },
      );
      return ack.seq;
    },
    async startBridge(overrides = {}) {
      const bridge = new Bridge({
        nats: { url: nats.url },
        stream: DEFAULT_STREAM,
        consumer: DEFAULT_CONSUMER,
        subjectFilter: DEFAULT_SUBJECT_FILTER,
        createStream: true,
        sqs: sqsClient,
        s3: s3Client,
        queueUrl: sqs.queueUrl,
        bucket: sqs.bucket,
        maxBytes,
        onReject: (info) =>
          recordRejection(database.as('bridge').db, {
            stage: 'bridge',
            ...info,
          }),
        ...FAST_BRIDGE,
        ...overrides,
      });
      extraBridges.push(bridge);
      await bridge.start();
      return bridge;
    },
    clusterOf: (agentId) =>
      queryMaybeOne<ClusterRow>(
        database.db,
        `select id, name, last_snapshot_at, node_count, workload_count, updated_at
         from clusters where environment_id = $1 and agent_id = $2`,
        [tenant.environmentId, agentId],
      ),
    rejections: () =>
      query<RejectionRow>(
        database.db,
        `select stage, subject, stream_seq, client_slug, env_slug, agent_id, reason,
                size_bytes
         from ingest_rejections order by received_at, stream_seq`,
      ),
    async streamBacklog() {
      const jsm = await jetstreamManager(publisher);
      const info = await jsm.consumers.info(DEFAULT_STREAM, DEFAULT_CONSUMER);
      return info.num_pending + info.num_ack_pending;
    },
    queueDepth: () => queueDepth(sqs.sqs, sqs.queueUrl),
    async stop() {
      for (const bridge of extraBridges) await bridge.stop();
      await ingest.stop();
      setSyncDeps(undefined);
      if (!publisher.isClosed()) await publisher.close();
      sqsClient.destroy();
      s3Client.destroy();
      await relay.stop();
      await sqs.stop();
      await nats.stop();
      await database.drop();
    },
  };
  return world;
}

export { eventually } from '../../helpers/eventually.ts';

export const newAgentId = () => randomUUID();
