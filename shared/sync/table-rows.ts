/**
 * A changed row as its table receives it: the kind's mapping (kinds.ts),
 * the digests of the row as sent, and for a new workload the facts its
 * insert stores as their baseline.
 */
import { factsDigest } from '../changes/workload-changes.ts';
import type { WorkloadRow } from '../wire/inventory.ts';
import type { IncomingRow } from './incoming.ts';
import type { DbRow, KindDefinition } from './kinds.ts';

/** A row to write, and for a new workload when its facts were first seen. */
export interface ChangedRow {
  row: IncomingRow;
  /**
   * A new workload: its insert stores its facts as the baseline, seen
   * first at this time (firstFacts), when the row is mapped.
   */
  factsFirstSeen: Date | undefined;
}

/**
 * A changed row as the write receives it: its table shape and digests.
 * Mapped as it is sent, so a row validated when read (a first sync's) is
 * validated while the database writes the rows before it.
 */
export function tableRow(def: KindDefinition, changed: ChangedRow): DbRow {
  const { row, factsFirstSeen } = changed;
  const value = row.value();
  const mapped = def.toRow(value as never);
  mapped.content_hash = row.hash();
  if (row.factsHash !== undefined) mapped.spec_facts_wire_hash = row.factsHash;
  if (factsFirstSeen !== undefined) {
    const facts = firstFacts(value as WorkloadRow, factsFirstSeen);
    if (facts) Object.assign(mapped, facts);
  }
  return mapped;
}

/**
 * A new workload's facts, stored by its insert as the baseline (first sight
 * records nothing), so the facts step need not write the row again.
 */
function firstFacts(
  workload: WorkloadRow,
  snapshotAt: Date,
): DbRow | undefined {
  const facts = workload.spec_facts;
  if (!facts) return undefined;
  return {
    spec_facts: facts,
    spec_facts_hash: factsDigest(facts),
    spec_facts_at: snapshotAt.toISOString(),
  };
}

/** JSON's spelling of NUL (not preceded by a backslash of its own). */
export const NUL_ESCAPE = /(?<!\\)\\u0000/g;

/**
 * Rows as one JSON array, stringified in one go (a large cluster's pods
 * are ~9 MB: joining per-row strings cost as much again). PostgreSQL text
 * cannot hold NUL; dropping it beats refusing a cluster.
 */
export function rowsJson(rows: readonly DbRow[]): string {
  const json = JSON.stringify(rows);
  return json.includes('\\u0000') ? json.replace(NUL_ESCAPE, '') : json;
}
