/**
 * The rules the diff keeps (spec: "Workload change records" → "Rules the diff
 * keeps"), as pure decisions. The sync applies them inside its transaction;
 * nothing here reads a clock or a database.
 */
import type { SpecFacts } from '../wire/spec-facts.ts';

/**
 * What the sync does with one workload's incoming facts:
 *
 * - `keep`: no facts arrived (old agent, workloadRef Rollout, facts dropped
 *   for size). Nothing is diffed, recorded or overwritten.
 * - `baseline`: store the incoming facts and the snapshot time, record
 *   nothing (first sight, or a facts_version change).
 * - `not_newer`: the snapshot is not strictly later than the stored one.
 *   Nothing is diffed, recorded or overwritten; the caller counts it on
 *   proxima_k8s_spec_facts_not_newer_total.
 * - `diff`: diff against the stored facts, record if anything changed, and
 *   store the incoming facts and time.
 */
export type FactsAction = 'baseline' | 'keep' | 'not_newer' | 'diff';

export interface StoredFacts {
  /** k8s_workloads.spec_facts; null when never stored. */
  facts: SpecFacts | null;
  /** k8s_workloads.spec_facts_at; null when never stored. */
  at: Date | null;
}

/** How far ahead of the backend's clock a snapshot stamp may be. */
export const MAX_CLOCK_AHEAD_MS = 60_000;

/**
 * Decides per the spec's rules, checked in this order:
 *
 * 1. Absent facts → `keep`, whatever the time: "absent means unknown, and the
 *    stored set is kept". An absent set is neither older nor newer news.
 * 2. No stored facts → `baseline` (first sight). There is nothing to rewind,
 *    so the snapshot's age does not matter.
 * 3. Snapshot not strictly later than the stored time → `not_newer`. This
 *    comes before the version check because the facts are "diffed, and
 *    overwritten, only when the incoming snapshot's time is strictly later":
 *    a redelivered old snapshot from before an agent upgrade must not rewind
 *    the stored facts through a baseline either. Stored facts without a time
 *    (none recorded) count as older than any snapshot.
 * 4. facts_version differs → `baseline` (a normalization change, not a spec
 *    change).
 * 5. Otherwise → `diff`.
 */
export function decideFactsAction(
  stored: StoredFacts,
  incoming: SpecFacts | undefined,
  snapshotAt: Date,
): FactsAction {
  if (incoming === undefined) return 'keep';
  if (stored.facts === null) return 'baseline';
  if (stored.at !== null && snapshotAt.getTime() <= stored.at.getTime()) {
    return 'not_newer';
  }
  if (stored.facts.facts_version !== incoming.facts_version) return 'baseline';
  return 'diff';
}

export interface ClampedTime {
  /** The time to use as the snapshot's time. */
  at: Date;
  /** True when the stamp was ahead by more than a minute; log a WARN. */
  clamped: boolean;
}

/**
 * A stamp more than one minute ahead of `now` becomes `now` plus one minute,
 * so one snapshot from a node whose clock jumped ahead cannot make every later
 * honest snapshot "not newer". Exactly one minute ahead is kept as is.
 */
export function clampSnapshotTime(stamp: Date, now: Date): ClampedTime {
  const limit = now.getTime() + MAX_CLOCK_AHEAD_MS;
  if (stamp.getTime() > limit) return { at: new Date(limit), clamped: true };
  return { at: stamp, clamped: false };
}

/** A snapshot's place in its cluster's order. */
export interface SnapshotOrder {
  /** The snapshot time used: the agent's stamp, clamped. */
  at: Date;
  /** The agent's own stamp. */
  stamp: Date;
  /** Its JetStream stream sequence, when it came through the stream. */
  streamSeq: number | undefined;
}

/**
 * Whether `incoming` is newer than the snapshot already `applied` (none: it
 * is). Not newer when its clamped time is not later: an older snapshot
 * delivered late, or a replay of the same one. `applied.streamSeq` is the
 * latest sequence taken for the cluster (a message skipped as stamped by a
 * clock that stepped back counts), `applied.stamp` the applied snapshot's.
 *
 * For an agent whose clock runs more than a minute fast, every stamp is
 * clamped to processing time plus a minute, so an older snapshot delivered
 * late (the bridge forwards one out of order rather than lose it) would look
 * newer by the clamped time alone. It is not newer either when its stream
 * sequence and the agent's own stamp both say it is older. Either alone could
 * mislead: a recreated stream numbers from 1 again, and a clock corrected
 * after running a day ahead stamps honest snapshots earlier than the stored
 * one (the reason for the clamp).
 */
/**
 * Whether the agent's clock stepped back: `incoming` came through the
 * stream after the snapshot `applied` (both sequences known) yet is
 * stamped strictly earlier by the agent's own clock. It is not applied
 * (not newer), yet its agent is reporting. An equal stamp is a replay (the
 * same snapshot published again, a retried publish whose first ack was
 * lost), not news of the agent.
 */
export function clockSteppedBack(
  applied: { stamp: Date | null; streamSeq: number | null } | undefined,
  incoming: SnapshotOrder,
): boolean {
  return (
    incoming.streamSeq !== undefined &&
    applied?.streamSeq != null &&
    applied.stamp !== null &&
    incoming.streamSeq > applied.streamSeq &&
    incoming.stamp < applied.stamp
  );
}

export function isNewerSnapshot(
  applied:
    | { at: Date | null; stamp: Date | null; streamSeq: number | null }
    | undefined,
  incoming: SnapshotOrder,
): boolean {
  if (applied?.at == null) return true;
  if (incoming.at <= applied.at) return false;
  const olderByBoth =
    incoming.streamSeq !== undefined &&
    applied.streamSeq !== null &&
    applied.stamp !== null &&
    incoming.streamSeq <= applied.streamSeq &&
    incoming.stamp <= applied.stamp;
  return !olderByBoth;
}
