/**
 * The facts step of the workload sync (spec: "Workload change records"): under
 * the cluster lock, compares each workload's incoming spec facts with the
 * stored set, writes at most one change_events row per changed workload, and
 * stores the new facts. The pure rules live in rules.ts, diff.ts, record.ts.
 *
 * A digest of each stored set is kept beside it, so the usual resync (no
 * facts changed) reads no stored facts and writes nothing.
 */
import { createHash } from 'node:crypto';
import { execute, prepared, type Queryable, query } from '../db/pool.ts';
import type { Inventory } from '../wire/inventory.ts';
import type { SpecFacts } from '../wire/spec-facts.ts';
import { type HpaFacts, hpaTargets } from './hpa.ts';
import { buildWorkloadChange } from './record.ts';
import { decideFactsAction } from './rules.ts';

export interface StoredFactsState {
  spec_facts_hash: string | null;
  spec_facts_at: Date | null;
}

export interface FactsStepInput {
  clusterId: string;
  clusterName: string;
  clientId: string;
  environmentId: string;
  snapshotAt: Date;
  workloads: NonNullable<Inventory['workloads']>;
  /**
   * The snapshot's HPAs; only these decide whether replicas are the HPA's.
   * Undefined (not collected): the stored HPAs, those of the last snapshot
   * that carried the array, decide instead, since a sync without it prunes
   * none of them. Called only when some workload's facts changed: most
   * resyncs never read them.
   */
  hpas: () => Inventory['hpas'];
  /**
   * Stored digest and time by workload key (kind, namespace, name joined by
   * \u0001), as read before this sync's upserts: a workload missing here is
   * new, and its insert already carried its first facts.
   */
  stored: ReadonlyMap<string, StoredFactsState>;
}

export interface FactsStepResult {
  baselined: number;
  diffed: number;
  recorded: number;
  notNewer: number;
}

export function factsDigest(facts: SpecFacts): string {
  return createHash('md5').update(JSON.stringify(facts)).digest('base64');
}

export const workloadKey = (w: {
  kind: string;
  namespace: string;
  name: string;
}) => `${w.kind}\u0001${w.namespace}\u0001${w.name}`;

interface Pending {
  workload: FactsStepInput['workloads'][number];
  facts: SpecFacts;
  digest: string;
}

export async function applyWorkloadFacts(
  tx: Queryable,
  input: FactsStepInput,
): Promise<FactsStepResult> {
  const result: FactsStepResult = {
    baselined: 0,
    diffed: 0,
    recorded: 0,
    notNewer: 0,
  };
  const candidates: Pending[] = [];
  // A workload listed twice is one workload: the last entry wins, as it
  // does for the workloads table, so it gets at most one change row.
  const workloads = new Map(input.workloads.map((w) => [workloadKey(w), w]));
  for (const workload of workloads.values()) {
    const facts = workload.spec_facts;
    if (!facts) continue; // absent means unknown: the stored set is kept
    const stored = input.stored.get(workloadKey(workload));
    if (!stored) {
      // New to this cluster: its insert stored these facts as the baseline
      // (and their digest, taken there).
      result.baselined++;
      continue;
    }
    const digest = factsDigest(facts);
    if (stored?.spec_facts_hash === digest) {
      // Same facts: nothing to diff or store. A replay still counts as not newer.
      if (stored.spec_facts_at && input.snapshotAt <= stored.spec_facts_at) {
        result.notNewer++;
      }
      continue;
    }
    candidates.push({ workload, facts, digest });
  }
  if (candidates.length === 0) return result;

  const previous = await listStoredFacts(
    tx,
    input.clusterId,
    candidates.map((c) => c.workload),
  );
  const hpas = input.hpas();
  const hpa = hpaTargets(
    hpas === undefined
      ? await listStoredHpaTargets(tx, input.clusterId)
      : hpas.map((h) => ({
          namespace: h.namespace,
          target:
            h.target?.kind && h.target.name
              ? { kind: h.target.kind, name: h.target.name }
              : null,
        })),
  );
  const writes: Pending[] = [];
  const records: Parameters<typeof insertChangeRecords>[2][number][] = [];
  for (const candidate of candidates) {
    const { workload, facts } = candidate;
    const stored = previous.get(workloadKey(workload)) ?? {
      facts: null,
      at: null,
    };
    const action = decideFactsAction(stored, facts, input.snapshotAt);
    if (action === 'not_newer') {
      result.notNewer++;
      continue;
    }
    if (action === 'keep') continue;
    writes.push(candidate);
    if (action === 'baseline' || !stored.facts) {
      result.baselined++;
      continue;
    }
    result.diffed++;
    const record = buildWorkloadChange({
      clusterId: input.clusterId,
      clusterName: input.clusterName,
      kind: workload.kind,
      namespace: workload.namespace,
      name: workload.name,
      before: stored.facts,
      after: facts,
      hpaManaged: hpa.isHpaManaged(
        workload.namespace,
        workload.kind,
        workload.name,
      ),
    });
    if (record) {
      records.push({
        event_type: record.eventType,
        summary: record.summary,
        details: record.details,
      });
    }
  }
  if (writes.length > 0)
    await storeFacts(tx, input.clusterId, input.snapshotAt, writes);
  if (records.length > 0) {
    await insertChangeRecords(tx, input, records);
    result.recorded = records.length;
  }
  return result;
}

/**
 * The HPA targets stored for the cluster: a snapshot that did not collect
 * HPAs left them as the last snapshot with an `hpas` array wrote them.
 */
async function listStoredHpaTargets(
  tx: Queryable,
  clusterId: string,
): Promise<HpaFacts[]> {
  const rows = await query<{
    namespace: string;
    target_kind: string | null;
    target_name: string | null;
  }>(
    tx,
    prepared(`select namespace, target_kind, target_name from k8s_hpas
     where cluster_id = $1 and target_kind is not null and target_name is not null`),
    [clusterId],
  );
  return rows.map((r) => ({
    namespace: r.namespace,
    target:
      r.target_kind && r.target_name
        ? { kind: r.target_kind, name: r.target_name }
        : null,
  }));
}

async function listStoredFacts(
  tx: Queryable,
  clusterId: string,
  workloads: readonly { kind: string; namespace: string; name: string }[],
): Promise<Map<string, { facts: SpecFacts | null; at: Date | null }>> {
  const rows = await query<{
    kind: string;
    namespace: string;
    name: string;
    spec_facts: SpecFacts | null;
    spec_facts_at: Date | null;
  }>(
    tx,
    prepared(`select w.kind, w.namespace, w.name, w.spec_facts, w.spec_facts_at
     from k8s_workloads w
     join unnest($2::text[], $3::text[], $4::text[]) as x(kind, namespace, name)
       on w.kind = x.kind and w.namespace = x.namespace and w.name = x.name
     where w.cluster_id = $1 and w.spec_facts is not null`),
    [
      clusterId,
      workloads.map((w) => w.kind),
      workloads.map((w) => w.namespace),
      workloads.map((w) => w.name),
    ],
  );
  return new Map(
    rows.map((r) => [
      workloadKey(r),
      { facts: r.spec_facts, at: r.spec_facts_at },
    ]),
  );
}

async function storeFacts(
  tx: Queryable,
  clusterId: string,
  snapshotAt: Date,
  writes: readonly Pending[],
): Promise<void> {
  await execute(
    tx,
    prepared(`update k8s_workloads w
     set spec_facts = x.facts, spec_facts_hash = x.digest, spec_facts_at = $2
     from jsonb_to_recordset($3::jsonb)
       as x(kind text, namespace text, name text, facts jsonb, digest text)
     where w.cluster_id = $1 and w.kind = x.kind
       and w.namespace = x.namespace and w.name = x.name`),
    [
      clusterId,
      snapshotAt,
      JSON.stringify(
        writes.map((w) => ({
          kind: w.workload.kind,
          namespace: w.workload.namespace,
          name: w.workload.name,
          facts: w.facts,
          digest: w.digest,
        })),
      ),
    ],
  );
}

/** Where and when a sync's change records happened. */
export interface ChangeRecordScope {
  clientId: string;
  environmentId: string;
  snapshotAt: Date;
}

/**
 * Writes a sync's change records (workloads, NetworkPolicies) as k8s-config
 * rows of its client and environment, observed at the snapshot's time: one
 * statement for all of them.
 */
export async function insertChangeRecords(
  tx: Queryable,
  input: ChangeRecordScope,
  records: readonly {
    event_type: string;
    summary: string;
    details: object;
  }[],
): Promise<void> {
  await execute(
    tx,
    prepared(`insert into change_events
       (source, event_type, client_id, environment_id, host_id, scanned_at,
        severity, summary, details)
     select 'k8s-config', x.event_type, $1, $2, null, $3, 'info', x.summary, x.details
     from jsonb_to_recordset($4::jsonb) as x(event_type text, summary text, details jsonb)`),
    [
      input.clientId,
      input.environmentId,
      input.snapshotAt,
      JSON.stringify(records),
    ],
  );
}
