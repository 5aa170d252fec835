/**
 * The sync: applies one inventory snapshot of one cluster to PostgreSQL in one
 * transaction (the spec's processing steps 1 to 17).
 *
 * Each row's digest, stored with it, tells which rows changed without asking
 * the database row by row, so a resync writes only what changed and prunes
 * only what disappeared. Kinds missing from the message were not collected:
 * they are neither written nor pruned.
 *
 * This file is the steps; the machinery is behind two surfaces: the rows
 * as received (incoming.ts: digests, deferred validation) and one kind's
 * write (write-kind.ts: chunks, COPY, work overlapped with the database's).
 */

import { isIP } from 'node:net';
import { syncArgocdApplications } from '../argocd/applications.ts';
import {
  type ReplacedPolicy,
  recordNetworkPolicyChanges,
} from '../changes/network-policy-changes.ts';
import {
  clampSnapshotTime,
  clockSteppedBack,
  isNewerSnapshot,
} from '../changes/rules.ts';
import {
  applyWorkloadFacts,
  type FactsStepResult,
} from '../changes/workload-changes.ts';
import {
  DEFAULT_EVENT_HISTORY_DAYS,
  DEFAULT_EVENT_RETENTION_HOURS,
} from '../config.ts';
import { type Db, type Tx, withTransaction } from '../db/pool.ts';
import { RejectedInventoryError } from '../errors.ts';
import {
  ensureEventHistoryPartitions,
  historyWindow,
  insertEventHistory,
} from '../events/history.ts';
import { faultPoint } from '../faults.ts';
import type { SnapshotRows } from '../metrics/series.ts';
import { toWireInventory, type WireInventory } from '../wire/decode.ts';
import type { Inventory, WorkloadRow } from '../wire/inventory.ts';
import { kindDigests, kindDigestsToStore, unchangedKinds } from './digests.ts';
import { type IncomingRow, IncomingRows, validateAllRows } from './incoming.ts';
import { KIND_ORDER, type KindKey, type Link, PRUNE_ORDER } from './kinds.ts';
import {
  type PrepareContext,
  type PreparedKind,
  prepareKind,
  unchangedKind,
} from './prepare.ts';
import {
  deferRollups,
  deleteRows,
  insertClusterIfMissing,
  type LinkageCounts,
  type LockedCluster,
  linkNodesToHosts,
  listStoredRows,
  lockCluster,
  lockSubjectCluster,
  markSnapshotReceived,
  type NodeLinkage,
  refreshRollups,
  repairLinks,
  type StoredFacts,
  type StoredRow,
  setFactsWireDigests,
  type TenantRow,
  updateClusterAndAsset,
} from './repo.ts';
import { KindWriter, writtenByCopy } from './write-kind.ts';

/** The sync's write sizes, for its tests. */
export { COPY_MIN_ROWS, UPSERT_CHUNK_ROWS } from './write-kind.ts';

export interface SyncSubject {
  clientSlug: string;
  envSlug: string;
  agentId: string;
}

export interface KindCounts {
  received: number;
  upserted: number;
  unchanged: number;
  pruned: number;
  /** Rows of the snapshot whose key an earlier row of it already had. */
  duplicates: number;
  /** The first few of those keys (`namespace/name`), each bounded. */
  duplicateKeys: string[];
  /** Whether its rows, all new, were written by COPY (write-kind.ts). */
  copied: boolean;
  /**
   * Whether its kind digest was the stored one: the rows stored, sent
   * again in the same order, left unread (digests.ts kindDigest).
   */
  sameDigest: boolean;
}

export interface SyncResult {
  /** What the facts step did (workload change records). */
  facts: FactsStepResult;
  /**
   * skipped_not_newer: the snapshot is not newer than the one applied (an
   * older one redelivered late, or a replay of the same one): a no-op.
   */
  outcome: 'applied' | 'skipped_not_newer';
  clusterId: string;
  clientId: string;
  environmentId: string;
  snapshotAt: Date;
  /** True when the agent's clock was ahead and its stamp was clamped. */
  clamped: boolean;
  /**
   * Skipped, yet later in the stream than the snapshot applied: the
   * agent's clock stepped back (clockSteppedBack).
   */
  clockSteppedBack?: boolean;
  kinds: Partial<Record<KindKey, KindCounts>>;
  linkage: LinkageCounts;
  durationMs: number;
  /**
   * Of durationMs, the client's CPU-bound work on the rows under the lock:
   * each row's digest and key, and the schema on the new or changed rows
   * (before any write, or for a kind validated as written in its step).
   */
  validationMs: number;
  /**
   * The rows the series write reads after the commit (SnapshotRows): a new
   * or changed row as the schema validated it, an unchanged one as sent
   * (accepted before, not validated or normalized again), each kind's rows
   * read only when first asked for.
   */
  seriesRows: SnapshotRows;
}

/** Runs a named step (a tracing span in AWS). */
export type SpanRunner = <T>(name: string, fn: () => Promise<T>) => Promise<T>;

export interface SyncOptions {
  /** The 60 s bound of the whole transaction, lock wait included. */
  timeoutMs?: number;
  /** Events last seen longer ago than this are not kept (the 24 h list). */
  eventRetentionHours?: number;
  /** How many days of event history to keep (EVENT_HISTORY_DAYS). */
  eventHistoryDays?: number;
  now?: () => Date;
  span?: SpanRunner;
  /** Test seam: runs after the upserts, before the prune. */
  beforePrune?: (tx: Tx) => Promise<void>;
  /** The message's JetStream stream sequence (isNewerSnapshot). */
  streamSeq?: number | undefined;
}

/** The spec's cluster status → asset status mapping. */
export const ASSET_STATUS: Record<string, string> = {
  healthy: 'active',
  degraded: 'degraded',
  unreachable: 'unreachable',
  unknown: 'active',
};

/** A DNS-1123 label from a cluster name, for URLs. */
export function slugify(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 63)
    .replace(/-+$/g, '');
  return slug || 'cluster';
}

const NO_FACTS: FactsStepResult = {
  baselined: 0,
  diffed: 0,
  recorded: 0,
  notNewer: 0,
};

const identitySpan: SpanRunner = (_name, fn) => fn();

/**
 * Applies one snapshot. Throws RejectedInventoryError for a message that can
 * never apply (unknown tenant, agent mismatch, a malformed row, a value
 * PostgreSQL cannot store); any other error is worth a retry. Either way the
 * database is left as it was.
 */
export async function syncInventory(
  db: Db,
  subject: SyncSubject,
  message: WireInventory | Inventory,
  options: SyncOptions = {},
): Promise<SyncResult> {
  const started = performance.now();
  const inventory = toWireInventory(message);
  const span = options.span ?? identitySpan;
  const now = options.now?.() ?? new Date();
  if (inventory.agent_id.toLowerCase() !== subject.agentId.toLowerCase()) {
    // A malformed row is named first, as when the whole schema ran first.
    validateAllRows(inventory);
    throw new RejectedInventoryError(
      `agent_id: ${inventory.agent_id} does not match the subject's agent ${subject.agentId}`,
    );
  }
  const stamp = new Date(inventory.timestamp);
  const { at: snapshotAt, clamped } = clampSnapshotTime(stamp, now);
  const order = { at: snapshotAt, stamp, streamSeq: options.streamSeq };
  const status = inventory.cluster.status ?? 'unknown';
  const assetStatus = ASSET_STATUS[status] ?? 'active';

  const historyDays = options.eventHistoryDays ?? DEFAULT_EVENT_HISTORY_DAYS;
  if (inventory.events !== undefined) {
    await ensureEventHistoryPartitions(db, historyDays, now);
  }

  return withTransaction(
    db,
    async (tx) => {
      // Steps 1 and 2 begin: the cluster (and its asset) of the subject's
      // tenant exists and is locked, so one snapshot of it applies at a time.
      const locked = await span('k8s.upsert_cluster', () =>
        lockOrCreateCluster(tx, subject, inventory, assetStatus),
      );
      if (!locked) {
        validateAllRows(inventory);
        throw new RejectedInventoryError(
          `unknown client or environment: ${subject.clientSlug}/${subject.envSlug}`,
        );
      }
      const { tenant, cluster, created } = locked;
      const base = {
        clusterId: cluster.id,
        clientId: tenant.client_id,
        environmentId: tenant.environment_id,
        snapshotAt,
        clamped,
      };
      // Under the lock: a kind whose digest is the stored one sent the
      // rows stored and is left alone; for the others, the stored rows'
      // digests tell which rows changed, and only those are validated,
      // before anything is written.
      const present = KIND_ORDER.filter((k) => inventory[k] !== undefined);
      const sentDigests = kindDigests(inventory, present);
      const unchanged = created
        ? new Set<KindKey>()
        : unchangedKinds(sentDigests, cluster.kind_digests);
      const stored = created
        ? new Map<KindKey, Map<string, StoredRow>>()
        : await storedRowsByKind(
            tx,
            cluster.id,
            present.filter((k) => !unchanged.has(k)),
          );
      const incoming = new IncomingRows(inventory, present, stored, unchanged);
      const seriesRows = incoming.seriesRows();

      const applied = {
        at: cluster.last_snapshot_at,
        stamp: cluster.last_snapshot_stamp,
        streamSeq: cluster.last_stream_seq,
      };
      if (!isNewerSnapshot(applied, order)) {
        // Not newer: an older snapshot redelivered late, or a replay (an
        // equal time). Nothing of it is written; its workloads are counted
        // as skipped for change purposes. A malformed row still refuses it.
        incoming.validateRest();
        const workloads = incoming.rows('workloads') ?? [];
        // Later in the stream though stamped earlier: the agent's clock
        // stepped back (its pod moved to a node whose clock is behind). Its
        // inventory waits until its stamps pass the applied one, but the
        // agent is reporting, so the stale sweep must not call it silent.
        const steppedBack = clockSteppedBack(applied, order);
        if (steppedBack) {
          await markSnapshotReceived(tx, cluster.id, order.streamSeq as number);
        }
        return {
          ...base,
          outcome: 'skipped_not_newer' as const,
          clockSteppedBack: steppedBack,
          kinds: {},
          linkage: { linked: 0, unlinked: 0 },
          facts: {
            ...NO_FACTS,
            notNewer: new Set(workloads.map((w) => w.key)).size,
          },
          durationMs: performance.now() - started,
          validationMs: incoming.validationMs(),
          seriesRows,
        };
      }
      const { kinds, linkage, linkLater, facts, rowsWritten } =
        await applyKinds(
          tx,
          cluster,
          tenant,
          inventory.cluster.name,
          present,
          incoming,
          stored,
          {
            unchanged: (kind) =>
              unchanged.has(kind) ? inventory[kind]?.length : undefined,
            snapshotAt,
            span,
            retentionHours:
              options.eventRetentionHours ?? DEFAULT_EVENT_RETENTION_HOURS,
            history: historyWindow(now, historyDays),
            beforePrune: options.beforePrune,
          },
        ).catch((error: unknown) => {
          // A row the database refused gives way to a malformed row not yet
          // validated: the schema's refusal comes first, as when it ran first.
          if (error instanceof RejectedInventoryError) incoming.validateRest();
          throw error;
        });
      incoming.validateRest();
      const applications = await syncArgocdApplications(
        tx,
        { id: cluster.id, clientId: tenant.client_id },
        inventory.argocd_applications,
      );
      // Steps 1 and 2 end: the cluster's and its asset's own fields, and
      // the snapshot applied, written last (with step 3's host linkage
      // when it was left for this statement).
      const linkedLater = await span('k8s.upsert_cluster', () =>
        updateClusterAndAsset(
          tx,
          cluster,
          {
            ...inventory.cluster,
            status,
            agent_version: inventory.agent_version ?? null,
            collection: inventory.collection ?? null,
          },
          assetStatus,
          order,
          kindDigestsToStore(cluster.kind_digests, sentDigests, kinds),
          rowsWritten ||
            (applications !== undefined &&
              applications.written + applications.pruned > 0),
          linkLater && {
            environmentId: tenant.environment_id,
            nodes: linkLater,
          },
        ),
      );
      await faultPoint('sync.before-commit', { tx, clusterId: cluster.id });
      return {
        ...base,
        outcome: 'applied' as const,
        kinds,
        linkage: linkLater ? linkedLater : linkage,
        facts,
        durationMs: performance.now() - started,
        validationMs: incoming.validationMs(),
        seriesRows,
      };
    },
    {
      timeoutMs: options.timeoutMs ?? 60_000,
      settings: {
        // A large cluster's rows arrive as one multi-MB parameter per kind:
        // enough memory keeps its hash joins from spilling to disk.
        work_mem: '64MB',
        // The statements are prepared (repo.ts); a custom plan would be
        // made again on every bind, and no parameter here changes the plan
        // (a cluster id, one JSON array whose rows the planner cannot see).
        plan_cache_mode: 'force_generic_plan',
      },
    },
  );
}

/** Undefined: the subject's client or environment does not exist. */
async function lockOrCreateCluster(
  tx: Tx,
  subject: SyncSubject,
  inventory: WireInventory,
  assetStatus: string,
): Promise<
  { tenant: TenantRow; cluster: LockedCluster; created: boolean } | undefined
> {
  const { agentId } = subject;
  const locked = await lockSubjectCluster(
    tx,
    subject.clientSlug,
    subject.envSlug,
    agentId,
  );
  if (!locked) return undefined;
  const { tenant } = locked;
  if (locked.cluster)
    return { tenant, cluster: locked.cluster, created: false };
  await insertClusterIfMissing(tx, {
    clientId: tenant.client_id,
    environmentId: tenant.environment_id,
    agentId,
    name: inventory.cluster.name,
    slug: slugify(inventory.cluster.name),
    assetStatus,
  });
  const cluster = await lockCluster(tx, tenant.environment_id, agentId);
  if (!cluster) throw new Error('cluster row vanished after insert');
  // A first sync racing another may find the other's rows: only a cluster
  // with no snapshot applied yet is known to hold none.
  return { tenant, cluster, created: cluster.last_snapshot_at === null };
}

/** The cluster's stored rows of the collected kinds, by kind and key. */
async function storedRowsByKind(
  tx: Tx,
  clusterId: string,
  kinds: readonly KindKey[],
): Promise<Map<KindKey, Map<string, StoredRow>>> {
  const out = new Map<KindKey, Map<string, StoredRow>>();
  for (const row of await listStoredRows(tx, clusterId, kinds)) {
    const byKey = out.get(row.kind) ?? new Map<string, StoredRow>();
    out.set(row.kind, byKey);
    byKey.set(row.key, row);
  }
  return out;
}

interface ApplyContext extends PrepareContext {
  /** An unchanged kind's row count (its kind digest matched), else undefined. */
  unchanged: (kind: KindKey) => number | undefined;
  span: SpanRunner;
  beforePrune: ((tx: Tx) => Promise<void>) | undefined;
}

/** The kinds whose write is a tracing span of its own. */
const SPAN_OF: Partial<Record<KindKey, string>> = {
  nodes: 'k8s.sync_nodes',
  namespaces: 'k8s.sync_namespaces',
  workloads: 'k8s.sync_workloads',
};

/**
 * Steps 3 to 16: each collected kind compared with what is stored and
 * written in the spec's order (nodes linked to hosts, workloads' facts
 * recorded), links repaired, then what disappeared pruned.
 */
async function applyKinds(
  tx: Tx,
  cluster: LockedCluster,
  tenant: { client_id: string; environment_id: string },
  clusterName: string,
  present: readonly KindKey[],
  incoming: IncomingRows,
  stored: ReadonlyMap<KindKey, Map<string, StoredRow>>,
  ctx: ApplyContext,
): Promise<{
  kinds: Partial<Record<KindKey, KindCounts>>;
  linkage: LinkageCounts;
  /** The nodes whose host linkage is left for the cluster's update. */
  linkLater: NodeLinkage | undefined;
  facts: FactsStepResult;
  /** Whether any row of the kinds (or their history) was written or pruned. */
  rowsWritten: boolean;
}> {
  // The figures follow each write (migrations/0023's triggers), in
  // proportion to the rows it wrote. A first sync writes every row: one
  // recompute after the prune reads them once instead.
  const firstSync = cluster.last_snapshot_at === null;
  if (firstSync) await deferRollups(tx);

  const scope = {
    clusterId: cluster.id,
    clusterName,
    clientId: tenant.client_id,
    environmentId: tenant.environment_id,
    snapshotAt: ctx.snapshotAt,
  };
  const kinds: Partial<Record<KindKey, KindCounts>> = {};
  const prunable = new Map<KindKey, string[]>();
  const linkTargetsGained = new Set<Link>();
  const allWritten = new Set<KindKey>();
  let linkage: LinkageCounts = { linked: 0, unlinked: 0 };
  let linkLater: NodeLinkage | undefined;
  let facts = NO_FACTS;
  // A node's host link is not counted: the next snapshot finds it again.
  let rowsWritten = firstSync;

  // Each kind is prepared once (compared with what is stored), by the
  // writer: in its turn, or ahead of it while the database writes another.
  const writer = new KindWriter(
    tx,
    cluster.id,
    present,
    (kind) => {
      const received = ctx.unchanged(kind);
      return received !== undefined
        ? unchangedKind(kind, received)
        : prepareKind(kind, incoming.rows(kind) ?? [], stored.get(kind), ctx);
    },
    { span: ctx.span, spanOf: SPAN_OF },
  );
  // Steps 3 to 15, one kind at a time in the spec's order.
  for (const kind of present) {
    const prepared = writer.prepared(kind);
    await writer.writeKind(prepared, async (writeRows) => {
      if (kind === 'network_policies') {
        // Before the upsert: the diff reads the policies as they were.
        await recordNetworkPolicyChanges(
          tx,
          scope,
          prepared.replaced as ReplacedPolicy[],
        );
      }
      await writeRows();
      if (prepared.history !== undefined) {
        await insertEventHistory(tx, cluster.id, prepared.history);
      }
      if (prepared.factsOnly.ids.length > 0) {
        await setFactsWireDigests(
          tx,
          cluster.id,
          prepared.factsOnly.ids,
          prepared.factsOnly.digests,
        );
      }
      if (kind === 'nodes') {
        // Step 3's host linkage. Every node, unchanged ones too: a host
        // registered since is found. With no node written, the nodes it
        // reads are the ones stored until the end: it rides with the
        // cluster's update there, a round trip less.
        const nodes = nodeLinkage(incoming.rows('nodes') ?? []);
        if (prepared.upserted === 0) linkLater = nodes;
        else {
          linkage = await linkNodesToHosts(
            tx,
            cluster.id,
            tenant.environment_id,
            nodes,
          );
        }
      }
      if (kind === 'workloads') {
        facts = await applyWorkloadFacts(tx, {
          ...scope,
          workloads: changedWorkloads(prepared),
          // Read for each HPA's namespace and target only, which a valid
          // row as sent has as a validated one does (or lacks alike).
          hpas: () => incoming.values('hpas') as Inventory['hpas'],
          stored: storedFacts(prepared.stored),
        });
      }
    });

    if (prepared.added > 0) {
      if (kind === 'namespaces') linkTargetsGained.add('namespace');
      if (kind === 'nodes') linkTargetsGained.add('node');
      if (kind === 'workloads') linkTargetsGained.add('workload');
    }
    if (prepared.upserted === prepared.received) allWritten.add(kind);
    // The facts step and the policies' change records follow changed rows.
    if (
      prepared.upserted > 0 ||
      prepared.gone.length > 0 ||
      prepared.history !== undefined ||
      prepared.factsOnly.ids.length > 0
    ) {
      rowsWritten = true;
    }
    prunable.set(kind, prepared.gone);
    kinds[kind] = countsOf(prepared);
  }

  if (linkTargetsGained.size > 0)
    await repairLinks(tx, cluster.id, linkTargetsGained, allWritten);
  if (ctx.beforePrune) await ctx.beforePrune(tx);

  // Step 16: children before parents.
  await ctx.span('worker.KubernetesPruneUnseen', async () => {
    for (const kind of PRUNE_ORDER) {
      const ids = prunable.get(kind);
      if (ids && ids.length > 0) await deleteRows(tx, kind, cluster.id, ids);
    }
  });
  // Step 17 for a first sync: its figures, deferred to here, in one pass
  // over its rows (a resync's follow each write).
  if (firstSync) await refreshRollups(tx, cluster.id);
  return { kinds, linkage, linkLater, facts, rowsWritten };
}

function countsOf(prepared: PreparedKind): KindCounts {
  return {
    received: prepared.received,
    upserted: prepared.upserted,
    unchanged: prepared.received - prepared.upserted,
    pruned: prepared.gone.length,
    duplicates: prepared.duplicates,
    duplicateKeys: prepared.duplicateKeys,
    copied: writtenByCopy(prepared),
    sameDigest: prepared.sameDigest,
  };
}

/**
 * The workloads whose facts may have changed: only a changed one can, as
 * an unchanged one sent the very facts the last snapshot stored (or none).
 */
function changedWorkloads(prepared: PreparedKind): WorkloadRow[] {
  const out: WorkloadRow[] = [];
  for (const w of prepared.incoming.values()) {
    if (w.changed) out.push(w.value() as WorkloadRow);
  }
  return out;
}

/** The stored workloads' facts by key, as the facts step reads them. */
function storedFacts(
  stored: ReadonlyMap<string, StoredRow>,
): Map<string, StoredFacts> {
  const out = new Map<string, StoredFacts>();
  for (const [key, row] of stored) if (row.facts) out.set(key, row.facts);
  return out;
}

/** What linkage reads of a node: a validated row and a valid one as sent. */
interface NodeAddresses {
  name: string;
  addresses?: readonly { type: string; address: string }[] | null;
}

/** What linkage reads of the nodes, the rest of an unchanged node unread. */
function nodeLinkage(rows: readonly IncomingRow[]): NodeLinkage {
  const nodes = rows.map((row) => {
    const [name, addresses] = row.members(['name', 'addresses']);
    return { name, addresses } as NodeAddresses;
  });
  return {
    nodeNames: nodes.map((n) => n.name),
    addressPairs: nodeAddressPairs(nodes),
  };
}

function nodeAddressPairs(nodes: readonly NodeAddresses[]) {
  const nodeNames: string[] = [];
  const ips: string[] = [];
  for (const node of nodes) {
    for (const a of node.addresses ?? []) {
      // An address with a zone (fe80::1%eth0) is no `inet`: no host has it.
      if (
        (a.type === 'InternalIP' || a.type === 'ExternalIP') &&
        isIP(a.address) &&
        !a.address.includes('%')
      ) {
        nodeNames.push(node.name);
        ips.push(a.address);
      }
    }
  }
  return { nodeNames, ips };
}
