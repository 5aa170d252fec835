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
import {
  AtLeastOnceQueue,
  BRIDGE_ACK_WAIT_MS,
  CONSUMER,
  clampedAt,
  countFault,
  type Fault,
  GEN_LABEL,
  genTag,
  type History,
  historyArb,
  imageOf,
  keyOf,
  lcg,
  type Message,
  MINUTE,
  messagesOf,
  NOW,
  PAD_BYTES,
  QUEUE_MAX_BYTES,
  RUNS,
  type RunResult,
  recordKey,
  SEED,
  STREAM,
  sleep,
  snapshotOf,
  TRANSPORT_PERCENT,
  TRANSPORT_SETTLE_MS,
  type TransportRun,
  WORKERS,
} from './history-plan.ts';

// ------------------------------------------------------------------ suite

/**
 * The guarantees each history is checked against, one test each, so a
 * failure names the one that broke (with the shrunk history that broke it).
 */
const RULES = {
  completes: 'runs every history to its end (no unexpected error)',
  settled: 'settles every message: none is lost',
  outcomes: 'applies or skips each snapshot and refuses each malformed message',
  untorn: 'never lets a reader see two snapshots mixed',
  newest: "stores each cluster's newest accepted snapshot, row for row",
  changes: 'records each later applied snapshot as one change, in order, once',
  refusals: 'records each refused message once, and no valid one',
  replay: 'writes nothing when every message is replayed',
} as const;
type Rule = keyof typeof RULES;

interface Violation {
  rule: Rule;
  message: string;
}

const messageOf = (error: unknown) =>
  error instanceof Error ? error.message : String(error);

describe('fault histories', () => {
  /** The violations of the history running now. */
  let current: Violation[] = [];

  /** Runs one guarantee's checks; a failed one is kept, not thrown. */
  async function holds(
    rule: Rule,
    check: () => void | Promise<void>,
  ): Promise<void> {
    try {
      await check();
    } catch (error) {
      current.push({ rule, message: messageOf(error) });
    }
  }

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
    await holds('settled', () => {
      expect(lost, 'messages never settled').toBe(0);
    });
    await holds('outcomes', () => {
      for (const { kind, outcome } of result.outcomes) {
        expect(outcome, kind).toMatch(
          kind === 'snapshot' ? /^(applied|skipped_not_newer)$/ : /^rejected$/,
        );
      }
    });
    await holds('untorn', () => {
      expect(torn, 'torn reads').toBe(0);
    });
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
      const clusterId = await checkCluster(agentId, snapshots, applied, atOf);
      if (clusterId !== undefined) clusterIds.push(clusterId);
    }
    await holds('refusals', () => checkRefusals(messages));
    await holds('replay', () => checkReplay(messages, clusterIds));
  }

  /**
   * One cluster's rows against its newest accepted snapshot, then its
   * change records against its applied snapshots; its id, when stored.
   */
  async function checkCluster(
    agentId: string,
    snapshots: Message[],
    applied: Map<string, number>,
    atOf: (m: Message) => number,
  ): Promise<string | undefined> {
    let clusterId: string | undefined;
    let winner: Message | undefined;
    await holds('newest', async () => {
      const [cluster] = await query<{ id: string; stamp: Date }>(
        database.db,
        'select id, last_snapshot_stamp as stamp from clusters where agent_id = $1',
        [agentId],
      );
      expect(cluster, `cluster ${agentId}`).toBeDefined();
      clusterId = cluster!.id;
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
      winner = snapshots.find((m) => m.tag === pods[0]?.tag);
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
    });
    if (clusterId === undefined || winner === undefined) return clusterId;
    const stored = { clusterId, winner };
    await holds('changes', async () => {
      const { clusterId: id, winner: newest } = stored;

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
        [id],
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
        expect(changes[changes.length - 1]!.after).toBe(imageOf(newest.tag!));
      }
      // Every commit after the first recorded exactly one change.
      const commits = applied.get(agentId) ?? 0;
      if (changes.length > commits - 1) broken.duplicated++;
      if (changes.length < commits - 1) broken.lost++;
      expect(changes.length, 'one change record per later commit').toBe(
        commits - 1,
      );
    });
    return clusterId;
  }

  /** Every refused message recorded once; no valid one recorded. */
  async function checkRefusals(messages: Message[]): Promise<void> {
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
  }

  /** A replay of every message writes nothing at all. */
  async function checkReplay(
    messages: Message[],
    clusterIds: string[],
  ): Promise<void> {
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

  /** The campaign's outcome, read by each guarantee's test below. */
  let campaign:
    | {
        failed: false;
      }
    | {
        failed: true;
        /** The shrunk history, to replay with its seed and path. */
        report: string;
        violations: Violation[];
      }
    | undefined;

  it('runs the campaign: generated histories under faults, each checked against every guarantee', {
    // A campaign's length grows with its runs (about a second each, more
    // while shrinking a failure).
    timeout: Math.max(600_000, RUNS * 10_000),
  }, async () => {
    let lastFailure: Violation[] = [];
    const details = await fc.check(
      fc.asyncProperty(historyArb, async (h) => {
        current = [];
        try {
          await runHistory(h);
        } catch (error) {
          current.push({ rule: 'completes', message: messageOf(error) });
        }
        if (current.length > 0) {
          // Shrinking ends on the smallest failing history: its violations.
          lastFailure = current;
          throw new Error(
            current.map((v) => `${v.rule}: ${v.message}`).join('\n'),
          );
        }
      }),
      { numRuns: RUNS, seed: SEED, endOnFailure: false },
    );
    campaign = details.failed
      ? {
          failed: true,
          violations: lastFailure,
          report: `seed ${details.seed}, path ${details.counterexamplePath}, after ${details.numRuns} histories (${details.numShrinks} shrinks): ${JSON.stringify(details.counterexample?.[0])}`,
        }
      : { failed: false };
    expect(totals.histories).toBeGreaterThanOrEqual(RUNS);
  });

  for (const [rule, title] of Object.entries(RULES) as [Rule, string][]) {
    it(title, () => {
      if (campaign === undefined) throw new Error('the campaign did not run');
      const broken = campaign.failed
        ? campaign.violations.filter((v) => v.rule === rule)
        : [];
      expect(
        broken.map((v) => v.message),
        campaign.failed ? campaign.report : '',
      ).toEqual([]);
    });
  }
});
