/**
 * A workload change record (spec: "Workload change records"): what the sync
 * writes as one change_events row for a workload whose facts changed. Pure;
 * the caller adds source, severity, scoping and scanned_at.
 */
import type { SpecFacts } from '../wire/spec-facts.ts';
import { diffSpecFacts, type FactChange } from './diff.ts';
import {
  changedSummary,
  type PhraseContext,
  scaledSummary,
} from './summary.ts';

/** How many changes `details.changes` keeps. */
export const MAX_RECORDED_CHANGES = 50;

export type WorkloadChangeEventType = 'workload_scaled' | 'workload_changed';

export interface WorkloadChangeDetails {
  cluster_id: string;
  cluster: string;
  kind: string;
  namespace: string;
  name: string;
  /** Every change found, also those cut from `changes`. */
  change_count: number;
  /** True when `changes` holds fewer entries than `change_count`. */
  truncated: boolean;
  changes: FactChange[];
}

export interface WorkloadChangeRecord {
  eventType: WorkloadChangeEventType;
  summary: string;
  details: WorkloadChangeDetails;
}

export interface WorkloadChangeInput {
  clusterId: string;
  clusterName: string;
  kind: string;
  namespace: string;
  name: string;
  before: SpecFacts;
  after: SpecFacts;
  /** An HPA in the same snapshot targets this workload. */
  hpaManaged: boolean;
}

/**
 * The record for one workload, or undefined when nothing changed (an HPA's
 * replica move alone is nothing). A change of replicas and nothing else is a
 * manual scale, `workload_scaled`; anything else is `workload_changed`.
 */
export function buildWorkloadChange(
  input: WorkloadChangeInput,
): WorkloadChangeRecord | undefined {
  const changes = diffSpecFacts(input.before, input.after, {
    hpaManaged: input.hpaManaged,
  });
  const [first] = changes;
  if (first === undefined) return undefined;

  const workload = {
    kind: input.kind,
    namespace: input.namespace,
    name: input.name,
  };
  const scaled = changes.length === 1 && first.field === 'replicas';
  const summary = scaled
    ? scaledSummary(workload, first)
    : changedSummary(
        workload,
        changes,
        phraseContext(input.before, input.after),
      );
  const kept = changes.slice(0, MAX_RECORDED_CHANGES);

  return {
    eventType: scaled ? 'workload_scaled' : 'workload_changed',
    summary,
    details: {
      cluster_id: input.clusterId,
      cluster: input.clusterName,
      kind: input.kind,
      namespace: input.namespace,
      name: input.name,
      change_count: changes.length,
      truncated: kept.length < changes.length,
      changes: kept,
    },
  };
}

/**
 * Main containers are named in phrases when the two sides together name more
 * than one main container.
 */
export function phraseContext(
  before: SpecFacts,
  after: SpecFacts,
): PhraseContext {
  const mainNames = new Set(
    [...before.containers, ...after.containers]
      .filter((container) => container.init !== true)
      .map((container) => container.name),
  );
  return { nameMainContainers: mainNames.size > 1 };
}
