/**
 * The ingest guarantee as a property: generated histories of several
 * clusters' snapshots (clock skew, duplicates, reordering, malformed,
 * claim-checked and oversized messages, gzip bombs) run through the real
 * sync path (processRecord, PostgreSQL, S3 in fauxqs) by three workers, with
 * faults injected at the fault points of shared/faults.ts. After each
 * history, from the database alone: each inventory is its newest accepted
 * snapshot row for row, the change records are the strictly increasing
 * transitions once each, a replay writes nothing, each refusal is recorded
 * once, and a reader polling during the run never saw two snapshots mixed.
 *
 * A share of the histories (FAULT_TRANSPORT_PERCENT, 25 by default) runs
 * over the real transport: published to a nats-server JetStream stream, moved
 * by the real bridge into the fauxqs FIFO queue (bodies past its limit by
 * claim check), consumed by three queue pollers as the local stack runs
 * them; the bridge dies between its send and its ack (redelivery after the
 * ack wait), and a worker's visibility timeout really expires (the queue
 * hands the message to another poller). The rest run over an in-process
 * at-least-once queue model, which reorders and duplicates more freely than
 * a FIFO queue does and costs a few milliseconds per delivery.
 *
 * FAULT_RUNS and FAULT_SEED (npm run test:faults -- --runs N --seed S) set
 * the campaign; the default is a short fixed-seed run for CI.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { ChangeMessageVisibilityCommand } from '@aws-sdk/client-sqs';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type Poller, startPoller } from '../../../infra/local/poller.ts';
import { query } from '../../../shared/db/pool.ts';
import {
  armFault,
  disarmFaults,
  type FaultName,
  InjectedFault,
} from '../../../shared/faults.ts';
import { Bridge } from '../../../shared/ingest/bridge/index.ts';
import {
  processRecord,
  type SyncDeps,
} from '../../../shared/ingest/process-record.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import { recordRejection } from '../../../shared/ingest/rejections.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { gzipBomb, gzipTooLargeJson } from '../../helpers/hostile-bodies.ts';
import {
  createTenant,
  dumpCluster,
  type Tenant,
} from '../../helpers/inventory-db.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { queueDepth, startSqs, type TestSqs } from '../../helpers/sqs.ts';
import { sqsRecordOf } from '../../helpers/sqs-record.ts';
import { tinyInventory } from '../../helpers/tiny-inventory.ts';

const RUNS = Number(process.env.FAULT_RUNS ?? 40);
const SEED = Number(process.env.FAULT_SEED ?? 20_2026);
/** The share of histories run over NATS, the bridge and the queue, in %. */
const TRANSPORT_PERCENT = Number(process.env.FAULT_TRANSPORT_PERCENT ?? 25);
const WORKERS = 3;
/** The sync's clock, fixed so that clamping an agent ahead is deterministic. */
const NOW = new Date('2026-06-01T12:00:00.000Z');
const MINUTE = 60_000;
const GEN_LABEL = 'fault-gen';
/**
 * The transport's queue limit: a tiny snapshot (about 9 KB) goes inline, a
 * padded one ({@link PAD_BYTES}) and the gzip bodies by claim check.
 */
const QUEUE_MAX_BYTES = 32 * 1024;
const PAD_BYTES = 40 * 1024;
/** The bridge's ack wait: how long a send abandoned by a crash waits. */
const BRIDGE_ACK_WAIT_MS = 2_000;
/** A transport history's bound, far above its seconds on a loaded machine. */
const TRANSPORT_SETTLE_MS = 90_000;
const STREAM = 'EVENTS';
const CONSUMER = 'k8s-inventory-bridge';

// ---------------------------------------------------------------- histories

const FAULTS = [
  'throw-before-commit',
  'throw-before-delete',
  'terminate-backend',
  'claim-check-read',
  'visibility-expires',
] as const;
type Fault = (typeof FAULTS)[number];

const MALFORMED = [
  'not-json',
  'wrong-agent',
  'unknown-tenant',
  /** Past MAX_INFLATED_BYTES once inflated: refused for its size alone. */
  'too-large',
  /** Gzip of twice MAX_INFLATED_BYTES of spaces: refused without inflating it whole. */
  'gzip-bomb',
] as const;
type Malformed = (typeof MALFORMED)[number];

interface SnapshotPlan {
  /** Minutes from NOW; above +1 the agent's clock is ahead (clamped). */
  offsetMin: number;
  /** Padded past the queue's limit: it travels by claim check. */
  claimCheck: boolean;
  /** Extra pods beyond the base one: the prune is exercised too. */
  extraPods: number;
}

interface MessagePlan {
  /** A valid snapshot (cluster, snapshot) or a malformed message. */
  kind: 'snapshot' | Malformed;
  cluster: number;
  snapshot: number;
  /** Faults of its first attempts, in order; later attempts run clean. */
  faults: Fault[];
  /** Delivered this many extra times (at-least-once duplicates). */
  duplicates: number;
  /** Over the transport: the bridge dies after sending it, before its ack. */
  bridgeCrash: boolean;
}

interface History {
  /** Over NATS, the bridge and the queue, or over the queue model. */
  transport: boolean;
  clusters: SnapshotPlan[][];
  malformed: { kind: Malformed; cluster: number }[];
  /** Sort keys: the publish (stream) order, then the queue's order. */
  publishOrder: number[];
  deliveryOrder: number[];
  faults: Fault[][];
  duplicates: number[];
  bridgeCrashes: boolean[];
  /** Drives where redelivered messages land (reordering). */
  shuffleSeed: number;
}

const snapshotPlan = fc.record({
  offsetMin: fc.integer({ min: -600, max: 120 }),
  claimCheck: fc.integer({ min: 0, max: 3 }).map((n) => n === 0),
  extraPods: fc.integer({ min: 0, max: 2 }),
});

const historyArb: fc.Arbitrary<History> = fc
  .record({
    // Unbiased, so that the share is what it says.
    transport: fc.noBias(fc.nat(99)).map((n) => n < TRANSPORT_PERCENT),
    clusters: fc.array(
      fc.uniqueArray(snapshotPlan, {
        minLength: 1,
        maxLength: 4,
        selector: (s) => s.offsetMin,
      }),
      { minLength: 2, maxLength: 3 },
    ),
    malformed: fc.array(
      fc.record({
        kind: fc.constantFrom(...MALFORMED),
        cluster: fc.nat(2),
      }),
      { maxLength: 3 },
    ),
    shuffleSeed: fc.nat(),
  })
  .chain((base) => {
    const n =
      base.clusters.reduce((sum, c) => sum + c.length, 0) +
      base.malformed.length;
    const perMessage = <T>(arb: fc.Arbitrary<T>) =>
      fc.array(arb, { minLength: n, maxLength: n });
    return fc.record({
      transport: fc.constant(base.transport),
      clusters: fc.constant(base.clusters),
      malformed: fc.constant(base.malformed),
      shuffleSeed: fc.constant(base.shuffleSeed),
      publishOrder: perMessage(fc.nat(1_000)),
      deliveryOrder: perMessage(fc.nat(1_000)),
      faults: perMessage(
        fc.array(fc.constantFrom(...FAULTS), { maxLength: 2 }),
      ),
      duplicates: perMessage(fc.integer({ min: 0, max: 1 })),
      // Rare: each costs the bridge's ack wait.
      bridgeCrashes: perMessage(fc.nat(7).map((n) => n === 0)),
    });
  });

function messagesOf(h: History): MessagePlan[] {
  const plans: Omit<MessagePlan, 'faults' | 'duplicates' | 'bridgeCrash'>[] =
    [];
  h.clusters.forEach((snapshots, cluster) => {
    snapshots.forEach((_, snapshot) => {
      plans.push({ kind: 'snapshot', cluster, snapshot });
    });
  });
  for (const m of h.malformed) {
    plans.push({
      kind: m.kind,
      cluster: m.cluster % h.clusters.length,
      snapshot: -1,
    });
  }
  return plans.map((p, i) => ({
    ...p,
    faults: h.faults[i] ?? [],
    duplicates: h.duplicates[i] ?? 0,
    bridgeCrash: h.bridgeCrashes[i] ?? false,
  }));
}

/** A small deterministic generator for the queue's reordering. */
function lcg(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, ms));

// ----------------------------------------------------------------- messages

const clampedAt = (offsetMin: number) =>
  Math.min(NOW.getTime() + offsetMin * MINUTE, NOW.getTime() + MINUTE);

const genTag = (run: string, cluster: number, snapshot: number) =>
  `${run}-c${cluster}-s${snapshot}`;

const imageOf = (tag: string) => `registry.local/app:${tag}`;

/** A cluster's snapshot, every row marked with its generation. */
function snapshotOf(
  base: Inventory,
  plan: SnapshotPlan,
  tag: string,
): Inventory {
  const inv = structuredClone(base);
  inv.timestamp = new Date(
    NOW.getTime() + plan.offsetMin * MINUTE,
  ).toISOString();
  for (const w of inv.workloads ?? []) {
    w.labels = { ...w.labels, [GEN_LABEL]: tag };
    if (plan.claimCheck) {
      w.annotations = {
        ...w.annotations,
        [`${GEN_LABEL}/pad`]: tag.padEnd(PAD_BYTES, '.'),
      };
    }
    for (const c of w.containers ?? []) c.image = imageOf(tag);
    for (const c of w.spec_facts?.containers ?? []) {
      if (c.init !== true) c.image = imageOf(tag);
    }
  }
  const pods = inv.pods ?? [];
  const [first] = pods;
  if (first !== undefined) {
    for (let i = 1; i <= plan.extraPods; i++) {
      pods.push({ ...structuredClone(first), name: `${first.name}-x${i}` });
      const added = pods[pods.length - 1]!;
      if (added.uid) added.uid = `${added.uid.slice(0, -2)}${i}x`;
    }
  }
  for (const p of pods) p.labels = { ...p.labels, [GEN_LABEL]: tag };
  return inv;
}

interface Message {
  plan: MessagePlan;
  subject: string;
  agentId: string;
  /** The NATS body as the agent publishes it, and whether it is gzip. */
  body: Buffer;
  gzip: boolean;
  /**
   * The queued record: built here over the model; over the transport, the
   * first one the sync settled (what a replay sends again).
   */
  record: SQSRecord | undefined;
  /** Its stream sequence (the model's records number their own). */
  streamSeq: number;
  tag: string | undefined;
  expected: Inventory | undefined;
}

// --------------------------------------------------------------- the queue

interface Delivery {
  message: Message;
  attempt: number;
}

/**
 * An at-least-once queue: a failed delivery comes back (anywhere behind
 * the head, so later messages may overtake it), a duplicate is queued twice,
 * a message whose visibility expires is delivered again while it runs.
 */
class AtLeastOnceQueue {
  readonly #ready: Delivery[] = [];
  #inFlight = 0;
  readonly #random: () => number;
  constructor(random: () => number) {
    this.#random = random;
  }
  push(d: Delivery, anywhere = false): void {
    const at = anywhere
      ? Math.floor(this.#random() * (this.#ready.length + 1))
      : this.#ready.length;
    this.#ready.splice(at, 0, d);
  }
  take(): Delivery | undefined | 'wait' {
    const d = this.#ready.shift();
    if (d !== undefined) {
      this.#inFlight++;
      return d;
    }
    return this.#inFlight > 0 ? 'wait' : undefined;
  }
  settle(): void {
    this.#inFlight--;
  }
}

/** What one history's run leaves for the checks. */
interface RunResult {
  applied: Map<string, number>;
  outcomes: { kind: MessagePlan['kind']; outcome: string }[];
  settled: Set<Message>;
  /** Faults injected, by kind. */
  faults: Map<string, number>;
  deliveries: number;
}

function countFault(result: RunResult, kind: string): void {
  result.faults.set(kind, (result.faults.get(kind) ?? 0) + 1);
}

/** A transport history in progress, as the pollers and the bridge see it. */
interface TransportRun {
  /** `subject#streamSeq` → its message, set as each publish is acked. */
  byKey: Map<string, Message>;
  /** The highest receive count seen per key (visibility expiry waits on it). */
  received: Map<string, number>;
  result: RunResult;
  /** Records inside the handler now. */
  busy: number;
}

const keyOf = (subject: string, streamSeq: number) => `${subject}#${streamSeq}`;

function recordKey(record: SQSRecord): string {
  return keyOf(
    record.messageAttributes[QueueAttribute.subject]?.stringValue ?? '',
    Number(record.messageAttributes[QueueAttribute.streamSeq]?.stringValue),
  );
}

// ------------------------------------------------------------------ suite

describe('fault histories', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let s3: TestSqs;
  let admin: pg.Client;
  let nats: TestNatsServer | undefined;
  let publisher: NatsConnection | undefined;
  let bridge: Bridge | undefined;
  let poller: Poller | undefined;
  let live: TransportRun | undefined;
  const faultContext = new AsyncLocalStorage<{
    fault: Fault | undefined;
    requeue: () => Promise<void>;
    fired: (fault: Fault) => void;
  }>();
  const totals = {
    histories: 0,
    overTransport: 0,
    /** Visibility expiries where a second poller received the message. */
    takenOver: 0,
    faults: new Map<string, number>(),
    messages: 0,
    deliveries: 0,
    reads: 0,
  };
  const broken = { lost: 0, duplicated: 0, torn: 0 };

  const syncDeps = (onProcessed?: SyncDeps['onProcessed']): SyncDeps => ({
    db: database.as('sync').db,
    s3: s3.s3,
    timeoutMs: 20_000,
    eventRetentionHours: 24,
    now: () => NOW,
    ...(onProcessed ? { onProcessed } : {}),
  });

  /** Processes a record, counting its agent's applied snapshots. */
  const processCounted = (
    record: Parameters<typeof processRecord>[0],
    agentId: string,
    result: RunResult,
  ) =>
    processRecord(
      record,
      syncDeps((p) => {
        if (p.outcome === 'applied') {
          result.applied.set(agentId, (result.applied.get(agentId) ?? 0) + 1);
        }
      }),
    );

  beforeAll(async () => {
    // Thousands of log and metric lines per history say nothing here; a
    // failure is reported by fast-check with its shrunk history.
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    s3 = await startSqs({ maxMessageBytes: QUEUE_MAX_BYTES });
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const inject = (name: FaultName, kinds: Fault[]) =>
      armFault(name, async (context) => {
        const current = faultContext.getStore();
        const fault = current?.fault;
        if (current === undefined || fault === undefined) return;
        if (!kinds.includes(fault)) return;
        current.fired(fault);
        if (fault === 'terminate-backend' && 'tx' in context) {
          const { rows } = await context.tx.query(
            'select pg_backend_pid() as pid',
          );
          const pid = (rows[0] as { pid: number }).pid;
          // Waits until the backend is gone: the COMMIT that follows fails.
          await admin.query('select pg_terminate_backend($1, 10000)', [pid]);
          return;
        }
        if (fault === 'visibility-expires') {
          // This worker froze past its visibility timeout: the queue hands
          // the message to another worker while this one still holds it.
          await current.requeue();
          return;
        }
        throw new InjectedFault(name);
      });
    inject('sync.before-commit', [
      'throw-before-commit',
      'terminate-backend',
      'visibility-expires',
    ]);
    inject('record.before-delete', ['throw-before-delete']);
    inject('claim-check.read', ['claim-check-read']);
    if (TRANSPORT_PERCENT > 0) await startTransport();
    // Built once: compressing 128 MiB takes a second or two.
    await Promise.all([gzipBomb(), gzipTooLargeJson()]);
  });

  afterAll(async () => {
    await poller?.stop();
    await bridge?.stop();
    if (publisher && !publisher.isClosed()) await publisher.close();
    await nats?.stop();
    vi.restoreAllMocks();
    disarmFaults();
    await admin?.end();
    await s3?.stop();
    await database?.drop();
    const faults = [...totals.faults.values()].reduce((a, b) => a + b, 0);
    const kinds = [...totals.faults]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    const claimChecked = bridge?.stats().claimChecked ?? 0;
    console.log(
      `${totals.histories} histories (${totals.overTransport} over NATS, the bridge and the queue; ${claimChecked} claim-checked by the bridge, ${totals.takenOver} taken over by a second poller), ${faults} faults injected (${kinds}), ${totals.messages} messages (${totals.deliveries} deliveries, ${totals.reads} reads): ${broken.lost} lost, ${broken.duplicated} duplicated, ${broken.torn} torn reads`,
    );
  });

  /**
   * nats-server with JetStream, the real bridge into the fauxqs FIFO queue
   * (rejections recorded as the local stack records them) and three pollers
   * (the local stack's stand-in for Lambda's event source) feeding the sync.
   */
  async function startTransport(): Promise<void> {
    nats = await startNatsServer();
    publisher = await connect({ servers: nats.url, name: 'fault-agents' });
    armFault('bridge.after-send', ({ sent }) => {
      const run = live;
      if (run === undefined) return;
      const doomed = sent
        .map((s) => run.byKey.get(keyOf(s.subject, s.streamSeq)))
        .filter((m) => m?.plan.bridgeCrash === true);
      if (doomed.length === 0) return;
      // Once per message: the redelivery after the ack wait goes through.
      for (const m of doomed) m!.plan.bridgeCrash = false;
      countFault(run.result, 'bridge-after-send');
      throw new InjectedFault('bridge.after-send', 'died between send and ack');
    });
    bridge = new Bridge({
      nats: { url: nats.url, name: 'fault-bridge' },
      stream: STREAM,
      consumer: CONSUMER,
      subjectFilter: 'proxima.*.*.*.kubernetes',
      createStream: true,
      sqs: s3.sqs,
      s3: s3.s3,
      queueUrl: s3.queueUrl,
      bucket: s3.bucket,
      maxBytes: QUEUE_MAX_BYTES,
      onReject: (info) =>
        recordRejection(database.db, { stage: 'bridge', ...info }),
      ackWaitMs: BRIDGE_ACK_WAIT_MS,
      retryBackoff: { baseMs: 50, maxMs: 500 },
      statsIntervalMs: 60_000,
    });
    await bridge.start();
    poller = await startPoller({
      sqs: s3.sqs,
      queueUrl: s3.queueUrl,
      concurrency: WORKERS,
      batchSize: 1,
      waitTimeSeconds: 1,
      visibilityTimeoutSeconds: 60,
      // A failed record is visible again at once (Lambda: the visibility
      // timeout; the history needs the redelivery, not the wait).
      retryDelaySeconds: 0,
      onBatch: (records) => {
        for (const r of records) {
          const key = recordKey(r);
          const count = Number(r.attributes.ApproximateReceiveCount);
          live?.received.set(key, Math.max(live.received.get(key) ?? 0, count));
        }
      },
      handler: async (event) => {
        const batchItemFailures: { itemIdentifier: string }[] = [];
        for (const record of event.Records) {
          try {
            await handleQueued(record);
          } catch {
            batchItemFailures.push({ itemIdentifier: record.messageId });
          }
        }
        return { batchItemFailures };
      },
    });
  }

  /** One queued record through processRecord, with its planned fault. */
  async function handleQueued(record: SQSRecord): Promise<void> {
    const run = live;
    if (run === undefined) throw new Error('a record outside any history');
    const key = recordKey(record);
    // The bridge may forward a message before its publish ack is read here.
    let message = run.byKey.get(key);
    for (let i = 0; message === undefined && i < 500; i++) {
      await sleep(10);
      message = run.byKey.get(key);
    }
    if (message === undefined) throw new Error(`no message ${key}`);
    const { result } = run;
    const attempt = Number(record.attributes.ApproximateReceiveCount) - 1;
    run.busy++;
    result.deliveries++;
    try {
      const outcome = await faultContext.run(
        {
          fault: message.plan.faults[attempt],
          fired: (fault) => countFault(result, fault),
          requeue: async () => {
            await s3.sqs.send(
              new ChangeMessageVisibilityCommand({
                QueueUrl: s3.queueUrl,
                ReceiptHandle: record.receiptHandle,
                VisibilityTimeout: 0,
              }),
            );
            // Frozen until another poller has taken it (bounded: on a busy
            // machine the commit may come first, as it may in AWS).
            for (let i = 0; i < 100; i++) {
              if ((run.received.get(key) ?? 0) > attempt + 1) {
                totals.takenOver++;
                return;
              }
              await sleep(20);
            }
          },
        },
        () => processCounted(record, message.agentId, result),
      );
      result.outcomes.push({ kind: message.plan.kind, outcome });
      result.settled.add(message);
      message.record ??= record;
    } finally {
      run.busy--;
    }
  }

  async function build(h: History): Promise<Message[]> {
    const run = randomUUID().slice(0, 8);
    const agents = h.clusters.map(() => randomUUID());
    const bases = agents.map((a) => tinyInventory(a, NOW, { specFacts: true }));
    const plans = messagesOf(h);
    // Stream sequences follow the publish order, not the snapshot times.
    const publish = plans
      .map((plan, i) => ({ plan, key: h.publishOrder[i] ?? 0, i }))
      .sort((a, b) => a.key - b.key || a.i - b.i);
    const messages: Message[] = [];
    for (const { plan } of publish) {
      const agentId = agents[plan.cluster]!;
      const subjectOf = (client: string) =>
        `proxima.${client}.${tenant.envSlug}.${agentId}.kubernetes`;
      let subject = subjectOf(tenant.clientSlug);
      let body: Buffer;
      let gzip = false;
      let tag: string | undefined;
      let expected: Inventory | undefined;
      if (plan.kind === 'snapshot') {
        tag = genTag(run, plan.cluster, plan.snapshot);
        expected = snapshotOf(
          bases[plan.cluster]!,
          h.clusters[plan.cluster]![plan.snapshot]!,
          tag,
        );
        body = Buffer.from(JSON.stringify(expected));
      } else if (plan.kind === 'not-json') {
        body = Buffer.from('{"type": "kubernetes_inventory", ');
      } else if (plan.kind === 'wrong-agent') {
        body = Buffer.from(
          JSON.stringify({ ...bases[plan.cluster]!, agent_id: randomUUID() }),
        );
      } else if (plan.kind === 'unknown-tenant') {
        subject = subjectOf(`nobody-${run}`);
        body = Buffer.from(JSON.stringify(bases[plan.cluster]!));
      } else {
        gzip = true;
        body =
          plan.kind === 'gzip-bomb'
            ? await gzipBomb()
            : await gzipTooLargeJson();
      }
      const message: Message = {
        plan,
        subject,
        agentId,
        body,
        gzip,
        record: undefined,
        streamSeq: 0,
        tag,
        expected,
      };
      if (!h.transport) await queueRecordOf(message, run);
      messages.push(message);
    }
    return messages;
  }

  /** The model's record of a message, as the bridge would queue it. */
  async function queueRecordOf(message: Message, run: string): Promise<void> {
    const { plan, body } = message;
    const padded =
      plan.kind === 'snapshot' &&
      message.expected !== undefined &&
      body.byteLength > QUEUE_MAX_BYTES;
    let record: SQSRecord;
    if (plan.kind === 'too-large') {
      // By claim check, as the bridge queues a body past the queue's limit.
      record = sqsRecordOf(message.subject, '', {
        [QueueAttribute.contentEncoding]: 'gzip',
      });
      const pointer = await putClaim(`claims/${run}/${record.messageId}`, body);
      record.messageAttributes[QueueAttribute.claimCheck] =
        stringAttribute(pointer);
      record.body = JSON.stringify({ bytes: body.byteLength });
    } else if (message.gzip) {
      record = sqsRecordOf(message.subject, body.toString('base64'), {
        [QueueAttribute.contentEncoding]: 'gzip',
        [QueueAttribute.bodyEncoding]: 'base64',
      });
    } else {
      record = sqsRecordOf(message.subject, body.toString('utf8'));
      if (padded) {
        const pointer = await putClaim(
          `claims/${run}/${record.messageId}`,
          body,
        );
        record.messageAttributes[QueueAttribute.claimCheck] =
          stringAttribute(pointer);
        record.body = JSON.stringify({ bytes: body.byteLength });
      }
    }
    message.record = record;
    message.streamSeq = Number(
      record.messageAttributes[QueueAttribute.streamSeq]?.stringValue,
    );
  }

  async function putClaim(key: string, body: Buffer): Promise<string> {
    await s3.s3.send(
      new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }),
    );
    return `s3://${s3.bucket}/${key}`;
  }

  const stringAttribute = (value: string) => ({
    dataType: 'String',
    stringValue: value,
    stringListValues: [],
    binaryListValues: [],
  });

  /** Generations per cluster seen in one REPEATABLE READ transaction. */
  async function readOnce(
    agents: string[],
    podsByTag: Map<string, number>,
  ): Promise<number> {
    const client = await database.db.connect();
    try {
      await client.query('begin isolation level repeatable read read only');
      const { rows } = await client.query<{
        agent_id: string;
        tag: string | null;
        pods: number;
        workloads: number;
      }>(
        `select c.agent_id, g.tag,
                count(*) filter (where g.k = 'p')::int as pods,
                count(*) filter (where g.k = 'w')::int as workloads
           from clusters c
           -- Per cluster, by its index: a join on the union scanned every
           -- earlier history's rows on each read, which made a long
           -- campaign's histories slower one after another.
           cross join lateral (
                 select labels ->> $2 as tag, 'p' as k from k8s_pods p
                  where p.cluster_id = c.id
                 union all
                 select labels ->> $2, 'w' from k8s_workloads w
                  where w.cluster_id = c.id) g
          where c.agent_id = any($1)
          group by c.agent_id, g.tag`,
        [agents, GEN_LABEL],
      );
      await client.query('commit');
      let torn = 0;
      const seen = new Map<string, number>();
      for (const r of rows) {
        seen.set(r.agent_id, (seen.get(r.agent_id) ?? 0) + 1);
        // One snapshot's rows only, and all of them.
        if (r.tag === null || podsByTag.get(r.tag) !== r.pods) torn++;
      }
      for (const n of seen.values()) if (n > 1) torn++;
      return torn;
    } finally {
      client.release();
    }
  }

  const emptyResult = (): RunResult => ({
    applied: new Map(),
    outcomes: [],
    settled: new Set(),
    faults: new Map(),
    deliveries: 0,
  });

  /** Three workers over the in-process at-least-once queue model. */
  async function runOverModel(
    h: History,
    messages: Message[],
  ): Promise<RunResult> {
    const result = emptyResult();
    const random = lcg(h.shuffleSeed);
    const queue = new AtLeastOnceQueue(random);
    const order = messages
      .map((m, i) => ({ m, key: h.deliveryOrder[i] ?? 0, i }))
      .sort((a, b) => a.key - b.key || a.i - b.i);
    for (const { m } of order) {
      queue.push({ message: m, attempt: 0 });
      for (let d = 0; d < m.plan.duplicates; d++) {
        queue.push({ message: m, attempt: 0 }, true);
      }
    }
    const worker = async () => {
      for (;;) {
        const next = queue.take();
        if (next === undefined) return;
        if (next === 'wait') {
          await sleep(2);
          continue;
        }
        const { message, attempt } = next;
        result.deliveries++;
        const record: SQSRecord = {
          ...message.record!,
          attributes: {
            ...message.record!.attributes,
            ApproximateReceiveCount: String(attempt + 1),
          },
        };
        try {
          const outcome = await faultContext.run(
            {
              fault: message.plan.faults[attempt],
              fired: (fault) => countFault(result, fault),
              requeue: async () => {
                queue.push({ message, attempt: attempt + 1 }, true);
                await sleep(30);
              },
            },
            () => processCounted(record, message.agentId, result),
          );
          result.outcomes.push({ kind: message.plan.kind, outcome });
          result.settled.add(message);
        } catch (error) {
          if (attempt > 8) throw error;
          // Not deleted: the queue delivers it again, maybe behind others.
          queue.push({ message, attempt: attempt + 1 }, true);
        } finally {
          queue.settle();
        }
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    return result;
  }

  /**
   * Publishes the history to JetStream (a duplicate is the agent publishing
   * the same body again, a stream message of its own), then waits until the
   * sync settled each one and the stream and the queue are empty.
   */
  async function runOverTransport(
    h: History,
    messages: Message[],
  ): Promise<{ published: Message[]; result: RunResult }> {
    const random = lcg(h.shuffleSeed);
    const published: Message[] = [];
    for (const m of messages) {
      published.push(m);
      for (let d = 0; d < m.plan.duplicates; d++) {
        const at = Math.floor(random() * (published.length + 1));
        published.splice(at, 0, { ...m, plan: { ...m.plan } });
      }
    }
    const run: TransportRun = {
      byKey: new Map(),
      received: new Map(),
      result: emptyResult(),
      busy: 0,
    };
    live = run;
    const js = jetstream(publisher!);
    for (const m of published) {
      const h = headers();
      if (m.gzip) h.set('Content-Encoding', 'gzip');
      const ack = await js.publish(m.subject, m.body, {
        headers: h,
        timeout: 30_000,
      });
      m.streamSeq = ack.seq;
      run.byKey.set(keyOf(m.subject, ack.seq), m);
    }
    const jsm = await jetstreamManager(publisher!);
    const deadline = Date.now() + TRANSPORT_SETTLE_MS;
    while (Date.now() < deadline) {
      if (run.result.settled.size === published.length && run.busy === 0) {
        const info = await jsm.consumers.info(STREAM, CONSUMER);
        if (
          info.num_pending + info.num_ack_pending === 0 &&
          (await queueDepth(s3.sqs, s3.queueUrl)) === 0
        ) {
          break;
        }
      }
      await sleep(20);
    }
    live = undefined;
    return { published, result: run.result };
  }

  async function runHistory(h: History): Promise<void> {
    let messages = await build(h);
    const agents = [...new Set(messages.map((m) => m.agentId))];
    const podsByTag = new Map<string, number>();
    for (const m of messages) {
      if (m.tag && m.expected) {
        podsByTag.set(m.tag, m.expected.pods?.length ?? 0);
      }
    }
    let reading = true;
    let torn = 0;
    const reader = (async () => {
      while (reading) {
        torn += await readOnce(agents, podsByTag);
        totals.reads++;
        await sleep(1);
      }
    })();
    let result: RunResult;
    try {
      if (h.transport) {
        ({ published: messages, result } = await runOverTransport(h, messages));
      } else {
        result = await runOverModel(h, messages);
      }
    } finally {
      reading = false;
      await reader;
    }
    totals.histories++;
    if (h.transport) totals.overTransport++;
    for (const [kind, n] of result.faults) {
      totals.faults.set(kind, (totals.faults.get(kind) ?? 0) + n);
    }
    totals.messages += messages.length;
    totals.deliveries += result.deliveries;

    const lost = messages.filter((m) => !result.settled.has(m)).length;
    broken.lost += lost;
    broken.torn += torn;
    expect(lost, 'messages never settled').toBe(0);
    for (const { kind, outcome } of result.outcomes) {
      expect(outcome, kind).toMatch(
        kind === 'snapshot' ? /^(applied|skipped_not_newer)$/ : /^rejected$/,
      );
    }
    expect(torn, 'torn reads').toBe(0);
    await check(messages, result.applied);
  }

  /**
   * The checks from the database alone. What is counted as lost or
   * duplicated is counted before the assertion that fails on it.
   */
  async function check(
    messages: Message[],
    applied: Map<string, number>,
  ): Promise<void> {
    const byAgent = new Map<string, Message[]>();
    for (const m of messages) {
      if (m.plan.kind !== 'snapshot') continue;
      byAgent.set(m.agentId, [...(byAgent.get(m.agentId) ?? []), m]);
    }
    const atOf = (m: Message) => clampedAt(offsetOf(m));
    const clusterIds: string[] = [];
    for (const [agentId, snapshots] of byAgent) {
      const [cluster] = await query<{ id: string; stamp: Date }>(
        database.db,
        'select id, last_snapshot_stamp as stamp from clusters where agent_id = $1',
        [agentId],
      );
      expect(cluster, `cluster ${agentId}`).toBeDefined();
      clusterIds.push(cluster!.id);
      // The newest accepted: the generation the rows carry must have the
      // latest clamped time (ties: agents ahead, all clamped to one time).
      const newest = Math.max(...snapshots.map(atOf));
      const pods = await query<{ name: string; tag: string; phase: string }>(
        database.db,
        `select name, labels ->> $2 as tag, phase from k8s_pods
          where cluster_id = $1 order by name`,
        [cluster!.id, GEN_LABEL],
      );
      const tags = new Set(pods.map((p) => p.tag));
      expect(tags.size, 'one generation stored').toBe(1);
      const winner = snapshots.find((m) => m.tag === pods[0]?.tag);
      expect(winner, 'stored generation is one of the snapshots').toBeDefined();
      expect(atOf(winner!), 'stored generation is the newest').toBe(newest);
      const inv = winner!.expected!;
      expect(cluster!.stamp.toISOString()).toBe(inv.timestamp);
      expect(pods).toEqual(
        (inv.pods ?? [])
          .map((p) => ({ name: p.name, tag: winner!.tag, phase: p.phase }))
          .sort((a, b) => (a.name < b.name ? -1 : 1)),
      );
      const workloads = await query<{
        kind: string;
        namespace: string;
        name: string;
        tag: string;
        image: string;
        facts_image: string;
        pad: number | null;
      }>(
        database.db,
        `select kind, namespace, name, labels ->> $2 as tag,
                containers -> 0 ->> 'image' as image,
                length(annotations ->> $3) as pad,
                (select c ->> 'image' from jsonb_array_elements(spec_facts -> 'containers') c
                  where coalesce((c ->> 'init')::boolean, false) = false limit 1) as facts_image
           from k8s_workloads where cluster_id = $1 order by kind, namespace, name`,
        [cluster!.id, GEN_LABEL, `${GEN_LABEL}/pad`],
      );
      // A claim-checked snapshot arrived whole: its padding is stored.
      const padded = (inv.workloads ?? []).some(
        (w) => w.annotations?.[`${GEN_LABEL}/pad`] !== undefined,
      );
      expect(workloads).toEqual(
        (inv.workloads ?? []).map((w) => ({
          kind: w.kind,
          namespace: w.namespace,
          name: w.name,
          tag: winner!.tag,
          image: imageOf(winner!.tag!),
          facts_image: imageOf(winner!.tag!),
          pad: padded ? PAD_BYTES : null,
        })),
      );

      // Change records: a chain of strictly later snapshots, each step once.
      const changes = await query<{ before: string; after: string }>(
        database.db,
        `select (select c ->> 'before' from jsonb_array_elements(details -> 'changes') c
                  where c ->> 'field' like '%.image' limit 1) as before,
                (select c ->> 'after' from jsonb_array_elements(details -> 'changes') c
                  where c ->> 'field' like '%.image' limit 1) as after
           from change_events
          where source = 'k8s-config' and details ->> 'cluster_id' = $1
          order by scanned_at, created_at`,
        [cluster!.id],
      );
      const byImage = new Map(snapshots.map((m) => [imageOf(m.tag!), m]));
      const steps = new Set<string>();
      for (const [i, c] of changes.entries()) {
        const before = byImage.get(c.before);
        const after = byImage.get(c.after);
        expect(before && after, `change ${c.before} → ${c.after}`).toBeTruthy();
        expect(atOf(after!)).toBeGreaterThan(atOf(before!));
        if (i > 0) expect(c.before).toBe(changes[i - 1]!.after);
        const key = `${c.before}>${c.after}`;
        if (steps.has(key)) broken.duplicated++;
        steps.add(key);
      }
      if (changes.length > 0) {
        expect(changes[changes.length - 1]!.after).toBe(imageOf(winner!.tag!));
      }
      // Every commit after the first recorded exactly one change.
      const commits = applied.get(agentId) ?? 0;
      if (changes.length > commits - 1) broken.duplicated++;
      if (changes.length < commits - 1) broken.lost++;
      expect(changes.length, 'one change record per later commit').toBe(
        commits - 1,
      );
    }

    // Every refused message recorded once; no valid one recorded.
    for (const m of messages) {
      const [row] = await query<{ n: number }>(
        database.db,
        `select count(*)::int as n from ingest_rejections
          where subject = $1 and stream_seq = $2`,
        [m.subject, m.streamSeq],
      );
      const want = m.plan.kind === 'snapshot' ? 0 : 1;
      if (row!.n > want) broken.duplicated++;
      if (row!.n < want) broken.lost++;
      expect(row!.n, `rejections of ${m.plan.kind}`).toBe(want);
    }

    // A replay of every message writes nothing at all.
    const before = await Promise.all(
      clusterIds.map((id) => dumpCluster(database.db, id)),
    );
    const [counts] = await query<{ changes: number; rejections: number }>(
      database.db,
      `select (select count(*) from change_events)::int as changes,
              (select count(*) from ingest_rejections)::int as rejections`,
    );
    for (const m of messages) {
      await processRecord(m.record!, syncDeps());
    }
    const after = await Promise.all(
      clusterIds.map((id) => dumpCluster(database.db, id)),
    );
    expect(after, 'a replay rewrote rows').toEqual(before);
    const [countsAfter] = await query<{ changes: number; rejections: number }>(
      database.db,
      `select (select count(*) from change_events)::int as changes,
              (select count(*) from ingest_rejections)::int as rejections`,
    );
    if (
      countsAfter!.rejections > counts!.rejections ||
      countsAfter!.changes > counts!.changes
    ) {
      broken.duplicated++;
    }
    expect(countsAfter, 'a replay recorded again').toEqual(counts);
  }

  function offsetOf(m: Message): number {
    return Date.parse(m.expected!.timestamp) / MINUTE - NOW.getTime() / MINUTE;
  }

  it('loses nothing, records nothing twice and tears no read under faults', {
    // A campaign's length grows with its runs (about a second each, more
    // while shrinking a failure).
    timeout: Math.max(600_000, RUNS * 10_000),
  }, async () => {
    await fc.assert(
      fc.asyncProperty(historyArb, async (h) => {
        await runHistory(h);
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false, verbose: 1 },
    );
  });
});
