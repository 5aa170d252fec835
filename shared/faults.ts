/**
 * Fault points: named places on the ingest path where a test can make the
 * process fail as a crash, an outage or a stall would, to check that nothing
 * is lost, recorded twice or half applied (test/integration/faults/).
 *
 * They are compiled in and off. A point costs one size check of an empty map
 * until a test arms it with `armFault` (the ingest benchmark arms one too,
 * with a handler that only notes the time); nothing else arms one. No
 * configuration setting, environment variable or request can: a switch that
 * production could reach would let a mistyped setting (or an attacker who
 * can set one) make the sync drop or replay messages on purpose, and the
 * guarantees these points check are the ones that switch would break.
 */

/** Every fault point, where it sits and what its context is. */
export interface FaultPoints {
  /** The bridge: SQS accepted a batch, nothing acked on NATS yet. */
  'bridge.after-send': {
    sent: readonly { subject: string; streamSeq: number }[];
  };
  /** The sync transaction: every row written, COMMIT not sent yet. */
  'sync.before-commit': {
    /** The transaction's client: its backend pid can be terminated. */
    tx: { query(sql: string): Promise<{ rows: unknown[] }> };
    clusterId: string;
  };
  /** A record settled (committed or refused), not deleted from the queue. */
  'record.before-delete': { messageId: string; outcome: string };
  /** A claim check is about to be read from S3. */
  'claim-check.read': { pointer: string };
}

export type FaultName = keyof FaultPoints;

/** Throws (a crash, an outage) or waits (a stall) when the point is hit. */
export type FaultHandler<N extends FaultName> = (
  context: FaultPoints[N],
) => void | Promise<void>;

const armed = new Map<FaultName, FaultHandler<FaultName>>();

/**
 * Runs the handler armed at `name`, if any. Returns undefined at once when
 * nothing is armed, so the caller's `await` is the only cost.
 */
export function faultPoint<N extends FaultName>(
  name: N,
  context: FaultPoints[N],
): void | Promise<void> {
  if (armed.size === 0) return undefined;
  const handler = armed.get(name) as FaultHandler<N> | undefined;
  return handler?.(context);
}

/** Arms one point (replacing its handler); the result disarms it. */
export function armFault<N extends FaultName>(
  name: N,
  handler: FaultHandler<N>,
): () => void {
  armed.set(name, handler as FaultHandler<FaultName>);
  return () => {
    if (armed.get(name) === handler) armed.delete(name);
  };
}

/** Disarms every point (a test's cleanup). */
export function disarmFaults(): void {
  armed.clear();
}

/** What an armed point throws: an injected failure, told apart in logs. */
export class InjectedFault extends Error {
  constructor(name: FaultName, what = 'injected fault') {
    super(`${what} at ${name}`);
    this.name = 'InjectedFault';
  }
}
