/**
 * The ingest guarantee as a property: generated histories of several
 * clusters' snapshots (clock skew, duplicates, reordering, malformed and
 * claim-checked messages) run through the real sync path (processRecord,
 * PostgreSQL, S3 in fauxqs) by three workers over an at-least-once queue,
 * with faults injected at the fault points of shared/faults.ts. After each
 * history, from the database alone: each inventory is its newest accepted
 * snapshot row for row, the change records are the strictly increasing
 * transitions once each, a replay writes nothing, each refusal is recorded
 * once, and a reader polling during the run never saw two snapshots mixed.
 *
 * FAULT_RUNS and FAULT_SEED (npm run test:faults -- --runs N --seed S) set
 * the campaign; the default is a short fixed-seed run for CI.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import {
  armFault,
  disarmFaults,
  type FaultName,
  InjectedFault,
} from '../../../shared/faults.ts';
import { processRecord } from '../../../shared/ingest/process-record.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  dumpCluster,
  type Tenant,
} from '../../helpers/inventory-db.ts';
import { startSqs, type TestSqs } from '../../helpers/sqs.ts';
import { sqsRecordOf } from '../../helpers/sqs-record.ts';
import { tinyInventory } from '../../helpers/tiny-inventory.ts';

const RUNS = Number(process.env.FAULT_RUNS ?? 40);
const SEED = Number(process.env.FAULT_SEED ?? 20_2026);
const WORKERS = 3;
/** The sync's clock, fixed so that clamping an agent ahead is deterministic. */
const NOW = new Date('2026-06-01T12:00:00.000Z');
const MINUTE = 60_000;
const GEN_LABEL = 'fault-gen';

// ---------------------------------------------------------------- histories

const FAULTS = [
  'throw-before-commit',
  'throw-before-delete',
  'terminate-backend',
  'claim-check-read',
  'visibility-expires',
] as const;
type Fault = (typeof FAULTS)[number];

const MALFORMED = ['not-json', 'wrong-agent', 'unknown-tenant'] as const;
type Malformed = (typeof MALFORMED)[number];

interface SnapshotPlan {
  /** Minutes from NOW; above +1 the agent's clock is ahead (clamped). */
  offsetMin: number;
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
}

interface History {
  clusters: SnapshotPlan[][];
  malformed: { kind: Malformed; cluster: number }[];
  /** Sort keys: the publish (stream) order, then the queue's order. */
  publishOrder: number[];
  deliveryOrder: number[];
  faults: Fault[][];
  duplicates: number[];
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
      { maxLength: 2 },
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
      clusters: fc.constant(base.clusters),
      malformed: fc.constant(base.malformed),
      shuffleSeed: fc.constant(base.shuffleSeed),
      publishOrder: perMessage(fc.nat(1_000)),
      deliveryOrder: perMessage(fc.nat(1_000)),
      faults: perMessage(
        fc.array(fc.constantFrom(...FAULTS), { maxLength: 2 }),
      ),
      duplicates: perMessage(fc.integer({ min: 0, max: 1 })),
    });
  });

function messagesOf(h: History): MessagePlan[] {
  const plans: Omit<MessagePlan, 'faults' | 'duplicates'>[] = [];
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
  record: SQSRecord;
  subject: string;
  agentId: string;
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

// ------------------------------------------------------------------ suite

describe('fault histories', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  let s3: TestSqs;
  let admin: pg.Client;
  const faultContext = new AsyncLocalStorage<{
    fault: Fault | undefined;
    requeue: () => void;
    fired: () => void;
  }>();
  const totals = {
    histories: 0,
    faults: 0,
    messages: 0,
    deliveries: 0,
    reads: 0,
  };
  const broken = { lost: 0, duplicated: 0, torn: 0 };

  beforeAll(async () => {
    // Thousands of log and metric lines per history say nothing here; a
    // failure is reported by fast-check with its shrunk history.
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    s3 = await startSqs();
    admin = new pg.Client({ connectionString: database.url });
    await admin.connect();
    const inject = (name: FaultName, kinds: Fault[]) =>
      armFault(name, async (context) => {
        const current = faultContext.getStore();
        const fault = current?.fault;
        if (current === undefined || fault === undefined) return;
        if (!kinds.includes(fault)) return;
        current.fired();
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
          current.requeue();
          await new Promise((resolve) => setTimeout(resolve, 30));
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
  });

  afterAll(async () => {
    vi.restoreAllMocks();
    disarmFaults();
    await admin?.end();
    await s3?.stop();
    await database?.drop();
    console.log(
      `${totals.histories} histories, ${totals.faults} faults injected, ${totals.messages} messages (${totals.deliveries} deliveries, ${totals.reads} reads): ${broken.lost} lost, ${broken.duplicated} duplicated, ${broken.torn} torn reads`,
    );
  });

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
      let body: string;
      let tag: string | undefined;
      let expected: Inventory | undefined;
      if (plan.kind === 'snapshot') {
        tag = genTag(run, plan.cluster, plan.snapshot);
        expected = snapshotOf(
          bases[plan.cluster]!,
          h.clusters[plan.cluster]![plan.snapshot]!,
          tag,
        );
        body = JSON.stringify(expected);
      } else if (plan.kind === 'not-json') {
        body = '{"type": "kubernetes_inventory", ';
      } else if (plan.kind === 'wrong-agent') {
        body = JSON.stringify({
          ...bases[plan.cluster]!,
          agent_id: randomUUID(),
        });
      } else {
        subject = subjectOf(`nobody-${run}`);
        body = JSON.stringify(bases[plan.cluster]!);
      }
      const record = sqsRecordOf(subject, body);
      if (
        plan.kind === 'snapshot' &&
        h.clusters[plan.cluster]![plan.snapshot]!.claimCheck
      ) {
        const key = `claims/${run}/${record.messageId}`;
        await s3.s3.send(
          new PutObjectCommand({ Bucket: s3.bucket, Key: key, Body: body }),
        );
        record.messageAttributes[QueueAttribute.claimCheck] = {
          dataType: 'String',
          stringValue: `s3://${s3.bucket}/${key}`,
          stringListValues: [],
          binaryListValues: [],
        };
        record.body = JSON.stringify({ bytes: Buffer.byteLength(body) });
      }
      messages.push({ plan, record, subject, agentId, tag, expected });
    }
    return messages;
  }

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
           join (select cluster_id, labels ->> $2 as tag, 'p' as k from k8s_pods
                 union all
                 select cluster_id, labels ->> $2, 'w' from k8s_workloads) g
             on g.cluster_id = c.id
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

  async function runHistory(h: History): Promise<void> {
    const messages = await build(h);
    const agents = [...new Set(messages.map((m) => m.agentId))];
    const podsByTag = new Map<string, number>();
    for (const m of messages) {
      if (m.tag && m.expected) {
        podsByTag.set(m.tag, m.expected.pods?.length ?? 0);
      }
    }
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
    const applied = new Map<string, number>();
    const outcomes: { kind: MessagePlan['kind']; outcome: string }[] = [];
    const settled = new Set<Message>();
    let faults = 0;
    let deliveries = 0;

    const worker = async () => {
      for (;;) {
        const next = queue.take();
        if (next === undefined) return;
        if (next === 'wait') {
          await new Promise((resolve) => setTimeout(resolve, 2));
          continue;
        }
        const { message, attempt } = next;
        deliveries++;
        const record: SQSRecord = {
          ...message.record,
          attributes: {
            ...message.record.attributes,
            ApproximateReceiveCount: String(attempt + 1),
          },
        };
        const fault = message.plan.faults[attempt];
        try {
          const outcome = await faultContext.run(
            {
              fault,
              fired: () => faults++,
              requeue: () =>
                queue.push({ message, attempt: attempt + 1 }, true),
            },
            () =>
              processRecord(record, {
                db: database.db,
                s3: s3.s3,
                timeoutMs: 20_000,
                eventRetentionHours: 24,
                now: () => NOW,
                onProcessed: (p) => {
                  if (p.outcome === 'applied') {
                    applied.set(
                      message.agentId,
                      (applied.get(message.agentId) ?? 0) + 1,
                    );
                  }
                },
              }),
          );
          outcomes.push({ kind: message.plan.kind, outcome });
          settled.add(message);
        } catch (error) {
          if (attempt > 8) throw error;
          // Not deleted: the queue delivers it again, maybe behind others.
          queue.push({ message, attempt: attempt + 1 }, true);
        } finally {
          queue.settle();
        }
      }
    };

    let reading = true;
    let torn = 0;
    const reader = (async () => {
      while (reading) {
        torn += await readOnce(agents, podsByTag);
        totals.reads++;
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    })();
    try {
      await Promise.all(Array.from({ length: WORKERS }, worker));
    } finally {
      reading = false;
      await reader;
    }
    totals.histories++;
    totals.faults += faults;
    totals.messages += messages.length;
    totals.deliveries += deliveries;

    const lost = messages.filter((m) => !settled.has(m)).length;
    broken.lost += lost;
    broken.torn += torn;
    expect(lost, 'messages never settled').toBe(0);
    for (const { kind, outcome } of outcomes) {
      expect(outcome, kind).toMatch(
        kind === 'snapshot' ? /^(applied|skipped_not_newer)$/ : /^rejected$/,
      );
    }
    expect(torn, 'torn reads').toBe(0);
    await check(messages, applied);
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
      }>(
        database.db,
        `select kind, namespace, name, labels ->> $2 as tag,
                containers -> 0 ->> 'image' as image,
                (select c ->> 'image' from jsonb_array_elements(spec_facts -> 'containers') c
                  where coalesce((c ->> 'init')::boolean, false) = false limit 1) as facts_image
           from k8s_workloads where cluster_id = $1 order by kind, namespace, name`,
        [cluster!.id, GEN_LABEL],
      );
      expect(workloads).toEqual(
        (inv.workloads ?? []).map((w) => ({
          kind: w.kind,
          namespace: w.namespace,
          name: w.name,
          tag: winner!.tag,
          image: imageOf(winner!.tag!),
          facts_image: imageOf(winner!.tag!),
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
        [
          m.subject,
          Number(
            m.record.messageAttributes[QueueAttribute.streamSeq]?.stringValue,
          ),
        ],
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
      await processRecord(m.record, {
        db: database.db,
        s3: s3.s3,
        timeoutMs: 20_000,
        eventRetentionHours: 24,
        now: () => NOW,
      });
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
