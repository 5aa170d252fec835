/**
 * The NetworkPolicy step of the sync: for each policy the snapshot carries
 * with a changed row digest, diffs what the table held against what arrives
 * and writes at most one change row per policy. It runs under the cluster
 * lock, before the policies' upsert, and only for a snapshot that is newer
 * than the one applied (the sync skips the others whole), so the rules are
 * the workloads': strictly newer snapshots only, creations and deletions not
 * recorded.
 */
import { prepared, type Queryable, query } from '../db/pool.ts';
import type { NetworkPolicyRow } from '../wire/inventory.ts';
import {
  buildNetworkPolicyChange,
  type NetworkPolicyFacts,
} from './network-policy.ts';
import {
  type ChangeRecordScope,
  insertChangeRecords,
} from './workload-changes.ts';

export interface ReplacedPolicy {
  /** The stored row's id. */
  id: string;
  wire: NetworkPolicyRow;
}

/** Returns how many change rows were written. */
export async function recordNetworkPolicyChanges(
  tx: Queryable,
  scope: ChangeRecordScope & { clusterId: string; clusterName: string },
  replaced: readonly ReplacedPolicy[],
): Promise<number> {
  if (replaced.length === 0) return 0;
  const stored = await query<
    NetworkPolicyFacts & { id: string } & Record<string, unknown>
  >(
    tx,
    prepared(`select id, pod_selector, policy_types, ingress, egress
     from k8s_network_policies
     where cluster_id = $1 and id = any($2::uuid[])`),
    [scope.clusterId, replaced.map((p) => p.id)],
  );
  const before = new Map(stored.map((row) => [row.id, row]));
  const records = [];
  for (const { id, wire } of replaced) {
    const was = before.get(id);
    if (was === undefined) continue;
    const record = buildNetworkPolicyChange({
      clusterId: scope.clusterId,
      clusterName: scope.clusterName,
      namespace: wire.namespace,
      name: wire.name,
      before: was,
      after: {
        pod_selector: wire.pod_selector ?? {},
        policy_types: wire.policy_types ?? [],
        ingress: wire.ingress ?? [],
        egress: wire.egress ?? [],
      },
    });
    if (record) {
      records.push({
        event_type: record.eventType,
        summary: record.summary,
        details: record.details,
      });
    }
  }
  if (records.length > 0) await insertChangeRecords(tx, scope, records);
  return records.length;
}
