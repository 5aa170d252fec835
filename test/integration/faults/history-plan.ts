/**
 * The fault histories' plan (histories.test.ts): the campaign's settings,
 * the generated histories (clusters' snapshots, malformed messages, faults,
 * duplicates, orders), the snapshots they publish and the at-least-once
 * queue model the in-process histories run over.
 */
import type { SQSRecord } from 'aws-lambda';
import fc from 'fast-check';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';

export const RUNS = Number(process.env.FAULT_RUNS ?? 40);
export const SEED = Number(process.env.FAULT_SEED ?? 20_2026);
/** The share of histories run over NATS, the bridge and the queue, in %. */
export const TRANSPORT_PERCENT = Number(
  process.env.FAULT_TRANSPORT_PERCENT ?? 25,
);
export const WORKERS = 3;
/** The sync's clock, fixed so that clamping an agent ahead is deterministic. */
export const NOW = new Date('2026-06-01T12:00:00.000Z');
export const MINUTE = 60_000;
export const GEN_LABEL = 'fault-gen';
/**
 * The transport's queue limit: a tiny snapshot (about 9 KB) goes inline, a
 * padded one ({@link PAD_BYTES}) and the gzip bodies by claim check.
 */
export const QUEUE_MAX_BYTES = 32 * 1024;
export const PAD_BYTES = 40 * 1024;
/** The bridge's ack wait: how long a send abandoned by a crash waits. */
export const BRIDGE_ACK_WAIT_MS = 2_000;
/** A transport history's bound, far above its seconds on a loaded machine. */
export const TRANSPORT_SETTLE_MS = 90_000;
export const STREAM = 'EVENTS';
export const CONSUMER = 'k8s-inventory-bridge';

// ---------------------------------------------------------------- histories

export const FAULTS = [
  'throw-before-commit',
  'throw-before-delete',
  'terminate-backend',
  'claim-check-read',
  'visibility-expires',
] as const;
export type Fault = (typeof FAULTS)[number];

export const MALFORMED = [
  'not-json',
  'wrong-agent',
  'unknown-tenant',
  /** Past MAX_INFLATED_BYTES once inflated: refused for its size alone. */
  'too-large',
  /** Gzip of twice MAX_INFLATED_BYTES of spaces: refused without inflating it whole. */
  'gzip-bomb',
] as const;
export type Malformed = (typeof MALFORMED)[number];

export interface SnapshotPlan {
  /** Minutes from NOW; above +1 the agent's clock is ahead (clamped). */
  offsetMin: number;
  /** Padded past the queue's limit: it travels by claim check. */
  claimCheck: boolean;
  /** Extra pods beyond the base one: the prune is exercised too. */
  extraPods: number;
}

export interface MessagePlan {
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

export interface History {
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

export const historyArb: fc.Arbitrary<History> = fc
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

export function messagesOf(h: History): MessagePlan[] {
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
export function lcg(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1_103_515_245) + 12_345) >>> 0;
    return state / 2 ** 32;
  };
}

export const sleep = (ms: number) =>
  new Promise<void>((resolve) => setTimeout(resolve, ms));

// ----------------------------------------------------------------- messages

export const clampedAt = (offsetMin: number) =>
  Math.min(NOW.getTime() + offsetMin * MINUTE, NOW.getTime() + MINUTE);

export const genTag = (run: string, cluster: number, snapshot: number) =>
  `${run}-c${cluster}-s${snapshot}`;

export const imageOf = (tag: string) => `registry.local/app:${tag}`;

/** A cluster's snapshot, every row marked with its generation. */
export function snapshotOf(
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

export interface Message {
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

export interface Delivery {
  message: Message;
  attempt: number;
}

/**
 * An at-least-once queue: a failed delivery comes back (anywhere behind
 * the head, so later messages may overtake it), a duplicate is queued twice,
 * a message whose visibility expires is delivered again while it runs.
 */
export class AtLeastOnceQueue {
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
export interface RunResult {
  applied: Map<string, number>;
  outcomes: { kind: MessagePlan['kind']; outcome: string }[];
  settled: Set<Message>;
  /** Faults injected, by kind. */
  faults: Map<string, number>;
  deliveries: number;
}

export function countFault(result: RunResult, kind: string): void {
  result.faults.set(kind, (result.faults.get(kind) ?? 0) + 1);
}

/** A transport history in progress, as the pollers and the bridge see it. */
export interface TransportRun {
  /** `subject#streamSeq` → its message, set as each publish is acked. */
  byKey: Map<string, Message>;
  /** The highest receive count seen per key (visibility expiry waits on it). */
  received: Map<string, number>;
  result: RunResult;
  /** Records inside the handler now. */
  busy: number;
}

export const keyOf = (subject: string, streamSeq: number) =>
  `${subject}#${streamSeq}`;

export function recordKey(record: SQSRecord): string {
  return keyOf(
    record.messageAttributes[QueueAttribute.subject]?.stringValue ?? '',
    Number(record.messageAttributes[QueueAttribute.streamSeq]?.stringValue),
  );
}
