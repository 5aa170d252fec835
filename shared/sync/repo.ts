/**
 * The SQL of the sync. Statements for the 13 kinds are built once, at module
 * load, from the kind table (identifiers from constants only); every value
 * travels as a parameter.
 */
import type { SnapshotOrder } from '../changes/rules.ts';
import {
  copyIn,
  execute,
  prepared,
  type Queryable,
  query,
  queryMaybeOne,
  queryOne,
  type Tx,
} from '../db/pool.ts';
import { TENANT_BY_SLUGS } from '../tenancy/tenants.ts';
import type { Cluster } from '../wire/inventory.ts';
import {
  KIND_ORDER,
  KINDS,
  type KindDefinition,
  type KindKey,
  type Link,
} from './kinds.ts';

const LINKS: Record<Link, { column: string; expr: string; join: string }> = {
  namespace: {
    column: 'namespace_id',
    expr: 'ns.id',
    join: 'left join k8s_namespaces ns on ns.cluster_id = $1 and ns.name = r.namespace',
  },
  node: {
    column: 'node_id',
    expr: 'nd.id',
    join: 'left join k8s_nodes nd on nd.cluster_id = $1 and nd.name = r.node_name',
  },
  workload: {
    column: 'workload_id',
    expr: 'wl.id',
    join: `left join k8s_workloads wl on wl.cluster_id = $1
      and wl.kind = r.workload_kind and wl.namespace = r.namespace
      and wl.name = r.workload_name`,
  },
};

function buildUpsert(def: KindDefinition): string {
  const links = def.links.map((l) => LINKS[l]);
  const insertOnly = def.insertOnly ?? [];
  const digests = ['content_hash', ...(def.digests ?? [])];
  const targets = [
    ...links.map((l) => l.column),
    ...def.columns,
    ...insertOnly,
    ...digests,
  ];
  const values = [
    ...links.map((l) => l.expr),
    ...def.columns.map((c) => `r.${c}`),
    ...insertOnly.map((c) => `r.${c}`),
    ...digests.map((c) => `r.${c}`),
  ];
  const updates = targets.filter(
    (c) => !def.keyColumns.includes(c) && !insertOnly.includes(c),
  );
  // The guard keeps a row that is somehow sent unchanged from being
  // rewritten (no new row version, no WAL).
  return `insert into ${def.table} as t (cluster_id, ${targets.join(', ')})
    select $1, ${values.join(', ')}
    from jsonb_populate_recordset(null::${def.table}, $2::jsonb) r
    ${links.map((l) => l.join).join('\n    ')}
    on conflict (cluster_id, ${def.keyColumns.join(', ')}) do update set
      ${updates.map((c) => `${c} = excluded.${c}`).join(',\n      ')},
      updated_at = now()
    where t.content_hash is distinct from excluded.content_hash`;
}

/**
 * A row's natural key in SQL, spelled as naturalKey spells it: the key
 * columns joined by \u0001. They are all `not null`, so `||` builds the
 * same text as concat_ws, for less (concat_ws calls each argument's output
 * function: ~0.2 ms of the stored-rows read's 3,300 rows).
 */
function keyExpr(def: KindDefinition): string {
  return def.keyColumns.join(' || chr(1) || ');
}

const UPSERT = Object.fromEntries(
  KIND_ORDER.map((k) => [k, buildUpsert(KINDS[k] as KindDefinition)]),
) as Record<KindKey, string>;

/**
 * Per kind, each stored row's id, key and digest; a workload's row also
 * carries its facts' digests and time as one json value (`facts`), which
 * every other kind's row leaves null: one column, not three, on each of the
 * other rows (a medium cluster's 3,100). The pods' branch reads only columns
 * their unique key carries (migration 0024): an index-only scan, which reads
 * no heap page but those whose pods changed since the last vacuum.
 */
const STORED = Object.fromEntries(
  KIND_ORDER.map((k) => {
    const def = KINDS[k] as KindDefinition;
    const facts =
      k === 'workloads'
        ? `json_build_object('spec_facts_hash', spec_facts_hash, 'spec_facts_at', spec_facts_at, 'spec_facts_wire_hash', spec_facts_wire_hash)`
        : 'null::json';
    return [
      k,
      `select '${k}' as kind, id, ${keyExpr(def)} as key, content_hash, ${facts} as facts
       from ${def.table} where cluster_id = $1`,
    ];
  }),
) as Record<KindKey, string>;

/** A workload's facts as stored: what tells its facts unchanged. */
export interface StoredFacts {
  spec_facts_hash: string | null;
  spec_facts_at: Date | null;
  /** The digest of its facts as last sent. */
  spec_facts_wire_hash: string | null;
}

export interface StoredRow {
  kind: KindKey;
  id: string;
  key: string;
  content_hash: string;
  /** Workloads only; null for every other kind. */
  facts: StoredFacts | null;
}

/** Every stored row's key and digest, for the kinds given, in one round trip. */
export async function listStoredRows(
  tx: Queryable,
  clusterId: string,
  kinds: readonly KindKey[],
): Promise<StoredRow[]> {
  if (kinds.length === 0) return [];
  const rows = await query<StoredRow & Record<string, unknown>>(
    tx,
    prepared(storedRowsStatement(kinds)),
    [clusterId],
  );
  for (const row of rows) {
    // json carries the time as ISO 8601 text (with its offset, whatever the
    // session's DateStyle): the one value JSON.parse leaves untyped.
    const facts = row.facts as { spec_facts_at: Date | string | null } | null;
    if (typeof facts?.spec_facts_at === 'string') {
      facts.spec_facts_at = new Date(facts.spec_facts_at);
    }
  }
  return rows;
}

/** The statement listStoredRows runs for these kinds ($1: the cluster). */
export function storedRowsStatement(kinds: readonly KindKey[]): string {
  return kinds.map((k) => STORED[k]).join('\nunion all\n');
}

/** The upsert statement of a kind (the benchmark's floor starts from it). */
export function upsertStatement(kind: KindKey): string {
  return UPSERT[kind];
}

/**
 * The columns a kind's rows are copied into, in order: cluster_id, the
 * links, then the upsert's columns (the same the upsert writes).
 */
export function copyColumns(kind: KindKey): string[] {
  const def = KINDS[kind] as KindDefinition;
  return [
    'cluster_id',
    ...def.links.map((l) => LINKS[l].column),
    ...def.columns,
    ...(def.insertOnly ?? []),
    'content_hash',
    ...(def.digests ?? []),
  ];
}

const COPY = Object.fromEntries(
  KIND_ORDER.map((k) => [
    k,
    `copy ${KINDS[k].table} (${copyColumns(k).join(', ')}) from stdin`,
  ]),
) as Record<KindKey, string>;

/**
 * Copies a kind's rows (COPY text lines in copyColumns' order, built as
 * they are sent) into its table: for a kind the cluster holds no row of,
 * so every row is new and the upsert's conflict handling has nothing to do.
 */
export function copyRows(
  tx: Tx,
  kind: KindKey,
  lines: Iterable<string>,
  sent?: () => void,
): Promise<number> {
  return copyIn(tx, COPY[kind], lines, sent);
}

/** The kind each link points to. */
const LINK_TARGET: Record<Link, KindKey> = {
  namespace: 'namespaces',
  node: 'nodes',
  workload: 'workloads',
};

/** Each link's ids by the key its target kind is stored under. */
const LINK_IDS = Object.fromEntries(
  (Object.keys(LINK_TARGET) as Link[]).map((link) => {
    const def = KINDS[LINK_TARGET[link]] as KindDefinition;
    return [
      link,
      `select '${link}' as link, ${keyExpr(def)} as key, id
       from ${def.table} where cluster_id = $1`,
    ];
  }),
) as Record<Link, string>;

/**
 * The ids a copied row's links point to, by the names the upsert's joins
 * match (a workload by kind, namespace and name, joined by \u0001).
 */
export async function listLinkIds(
  tx: Queryable,
  clusterId: string,
  links: readonly Link[],
): Promise<Map<Link, Map<string, string>>> {
  const out = new Map<Link, Map<string, string>>(
    links.map((l) => [l, new Map<string, string>()]),
  );
  if (links.length === 0) return out;
  const rows = await query<{ link: Link; key: string; id: string }>(
    tx,
    prepared(links.map((l) => LINK_IDS[l]).join('\nunion all\n')),
    [clusterId],
  );
  for (const row of rows) out.get(row.link)?.set(row.key, row.id);
  return out;
}

/** Writes the rows (already JSON, each with its content_hash); returns rows written. */
export async function upsertRows(
  tx: Queryable,
  kind: KindKey,
  clusterId: string,
  rowsJson: string,
): Promise<number> {
  return execute(tx, prepared(UPSERT[kind]), [clusterId, rowsJson]);
}

/**
 * Workloads whose facts alone changed: the new digest of the facts as sent
 * (the row itself is not rewritten; the facts step stores the facts).
 */
export async function setFactsWireDigests(
  tx: Queryable,
  clusterId: string,
  ids: readonly string[],
  digests: readonly string[],
): Promise<void> {
  await execute(
    tx,
    prepared(`update k8s_workloads w set spec_facts_wire_hash = x.digest
     from unnest($2::uuid[], $3::text[]) as x(id, digest)
     where w.cluster_id = $1 and w.id = x.id`),
    [clusterId, ids, digests],
  );
}

export async function deleteRows(
  tx: Queryable,
  kind: KindKey,
  clusterId: string,
  ids: readonly string[],
): Promise<number> {
  return execute(
    tx,
    prepared(
      `delete from ${KINDS[kind].table} where cluster_id = $1 and id = any($2::uuid[])`,
    ),
    [clusterId, ids],
  );
}

/**
 * Fills links left empty because their target did not exist when the row was
 * written (a namespace, node or workload that arrived later, or was deleted
 * and came back). Only runs for links whose targets gained rows this sync.
 */
export async function repairLinks(
  tx: Queryable,
  clusterId: string,
  targets: ReadonlySet<Link>,
  /** Kinds whose every row this sync wrote, links resolved: nothing to repair. */
  allWritten: ReadonlySet<KindKey>,
): Promise<void> {
  const statements: string[] = [];
  if (targets.has('namespace')) {
    for (const key of KIND_ORDER) {
      const def = KINDS[key] as KindDefinition;
      if (!def.links.includes('namespace') || allWritten.has(key)) continue;
      statements.push(`update ${def.table} t set namespace_id = ns.id
        from k8s_namespaces ns
        where t.cluster_id = $1 and t.namespace_id is null
          and ns.cluster_id = $1 and ns.name = t.namespace`);
    }
  }
  const podsWritten = allWritten.has('pods');
  if (targets.has('node') && !podsWritten) {
    statements.push(`update k8s_pods p set node_id = nd.id
      from k8s_nodes nd
      where p.cluster_id = $1 and p.node_id is null and p.node_name is not null
        and nd.cluster_id = $1 and nd.name = p.node_name`);
  }
  if (targets.has('workload') && !podsWritten) {
    statements.push(`update k8s_pods p set workload_id = wl.id
      from k8s_workloads wl
      where p.cluster_id = $1 and p.workload_id is null and p.workload_name is not null
        and wl.cluster_id = $1 and wl.kind = p.workload_kind
        and wl.namespace = p.namespace and wl.name = p.workload_name`);
  }
  for (const sql of statements) await execute(tx, prepared(sql), [clusterId]);
}

export interface TenantRow {
  client_id: string;
  environment_id: string;
}

export interface LockedCluster {
  id: string;
  asset_id: string;
  name: string;
  last_snapshot_at: Date | null;
  last_snapshot_stamp: Date | null;
  /**
   * The latest stream sequence the sync has taken for the cluster: the
   * applied snapshots' and those skipped as stamped by a clock that
   * stepped back (markSnapshotReceived). A message at or below it was seen.
   */
  last_stream_seq: number | null;
  /** Each kind's digest as last applied (digests.ts kindDigest); null: none. */
  kind_digests: Record<string, string> | null;
}

/** The locked cluster's columns (LockedCluster). */
const LOCKED_COLUMNS = `id, asset_id, name, last_snapshot_at, last_snapshot_stamp,
  last_stream_seq, kind_digests`;

/**
 * Locks the cluster row (FOR NO KEY UPDATE: serializes syncs of one cluster
 * without blocking inserts that reference it). Every transaction that touches
 * a cluster's child rows takes this lock first.
 */
export function lockCluster(
  tx: Queryable,
  environmentId: string,
  agentId: string,
): Promise<LockedCluster | undefined> {
  return queryMaybeOne<LockedCluster & Record<string, unknown>>(
    tx,
    prepared(`select ${LOCKED_COLUMNS}
     from clusters
     where environment_id = $1 and agent_id = $2
     for no key update`),
    [environmentId, agentId],
  );
}

/**
 * The subject's client and environment (undefined unless both exist) and,
 * locked as lockCluster locks it, its agent's cluster (undefined while it has
 * none): the tenant by its slugs and the lock in one round trip.
 */
export async function lockSubjectCluster(
  tx: Queryable,
  clientSlug: string,
  envSlug: string,
  agentId: string,
): Promise<
  { tenant: TenantRow; cluster: LockedCluster | undefined } | undefined
> {
  const row = await queryMaybeOne<
    { client_id: string; environment_id: string | null } & Partial<
      Record<keyof LockedCluster, unknown>
    >
  >(
    tx,
    prepared(`with tenant as (${TENANT_BY_SLUGS})
     select t.client_id, t.environment_id, c.*
     from tenant t
     left join lateral (
       select ${LOCKED_COLUMNS}
       from clusters
       where environment_id = t.environment_id and agent_id = $3
       for no key update
     ) c on true`),
    [clientSlug, envSlug, agentId],
  );
  if (row?.environment_id == null) return undefined;
  const { client_id, environment_id, ...cluster } = row;
  return {
    tenant: { client_id, environment_id },
    cluster: cluster.id == null ? undefined : (cluster as LockedCluster),
  };
}

export interface NewCluster {
  clientId: string;
  environmentId: string;
  agentId: string;
  name: string;
  slug: string;
  assetStatus: string;
}

/**
 * Creates the cluster and its asset when the agent is new. Two first syncs of
 * one new cluster may race: the loser's insert waits on the unique key, then
 * does nothing, and its asset is removed again.
 */
export async function insertClusterIfMissing(
  tx: Queryable,
  c: NewCluster,
): Promise<void> {
  const asset = await queryOne<{ id: string }>(
    tx,
    `insert into assets (client_id, environment_id, asset_type, name, status)
     values ($1, $2, 'cluster', $3, $4) returning id`,
    [c.clientId, c.environmentId, c.name, c.assetStatus],
  );
  const inserted = await query(
    tx,
    `insert into clusters (asset_id, client_id, environment_id, agent_id, name, slug)
     select $1, $2, $3, $4, $5,
       case when exists (select 1 from clusters where environment_id = $3 and slug = $6)
         then $6 || '-' || $7 else $6 end
     on conflict (environment_id, agent_id) do nothing
     returning id`,
    [
      asset.id,
      c.clientId,
      c.environmentId,
      c.agentId,
      c.name,
      c.slug,
      // Another agent reports a cluster of the same name: its own id tells
      // the two apart.
      c.agentId.slice(0, 8),
    ],
  );
  if (inserted.length === 0) {
    await execute(tx, 'delete from assets where id = $1', [asset.id]);
  }
}

/** The cluster row's own facts: the agent's cluster block and envelope. */
export type ClusterFacts = Omit<Cluster, 'status'> & {
  status: string;
  agent_version: string | null;
  collection: unknown;
};

/**
 * Steps 1 and 2: the asset (with the status mapping), the cluster's
 * metadata, its agent status and snapshot time. Its counts (step 17) are
 * refreshRollups'. One statement, so one round trip: the asset's update (a
 * data-modifying WITH, written only when its name or status changed) runs
 * whether or not the cluster's reads it.
 *
 * `rowsWritten` false (the snapshot changed no row of the cluster's): the
 * transaction commits without waiting for its WAL to reach the disk
 * (synchronous_commit off for it alone, docs/decisions.md). All it wrote is
 * the cluster's own fields, which the next snapshot writes again; the flush
 * was most of a small cluster's no-change resync.
 *
 * `linkage`: the nodes whose host linkage rides with this statement (the
 * snapshot's nodes when none was written: a round trip less), or none;
 * resolves to its counts.
 */
/**
 * A snapshot received but not applied because its agent's clock stepped
 * back (sync.ts): its agent is reporting, so the stale sweep, which judges
 * silence by last_received_at, leaves it connected. Its stream sequence
 * becomes the cluster's latest (last_stream_seq), so the queue redelivering
 * the same message is not news again.
 */
export async function markSnapshotReceived(
  tx: Queryable,
  clusterId: string,
  streamSeq: number,
): Promise<void> {
  await query(
    tx,
    `update clusters set last_received_at = now(), agent_status = 'connected',
       last_stream_seq = greatest(last_stream_seq, $2)
      where id = $1`,
    [clusterId, streamSeq],
  );
}

export async function updateClusterAndAsset(
  tx: Queryable,
  cluster: LockedCluster,
  facts: ClusterFacts,
  assetStatus: string,
  snapshot: SnapshotOrder,
  kindDigests: Readonly<Record<string, string>>,
  rowsWritten: boolean,
  linkage: { environmentId: string; nodes: NodeLinkage } | undefined,
): Promise<LinkageCounts> {
  return queryOne<{ linked: number; unlinked: number }>(
    tx,
    prepared(`with ${linkageCtes({ c: 1, e: 25, p: 26, i: 27, n: 28 })},
     asset as (
       update assets set name = $2, status = $21, updated_at = now()
       where id = $22 and (name, status) is distinct from ($2, $21)
     )
     update clusters set
       name = $2, display_name = $3, uid = $4, version = $5, platform = $6,
       distribution = $7, api_server_url = $8, cluster_cidr = $9,
       service_cidr = $10, dns_domain = coalesce($11, 'cluster.local'), cloud_provider = $12,
       cloud_region = $13, cloud_account_id = $14, status = $15,
       agent_version = $16, collection = $17::jsonb,
       agent_status = 'connected',
       last_seen_at = greatest(last_seen_at, $18),
       last_received_at = now(),
       last_snapshot_at = greatest(last_snapshot_at, $18),
       last_snapshot_stamp = $19,
       last_stream_seq = greatest(last_stream_seq, $20),
       kind_digests = $23::jsonb, updated_at = now()
     where id = $1
       and case when $24::boolean then true
         else (select set_config('synchronous_commit', 'off', true)) = 'off' end
     returning (select linked from linked) as linked,
       (select unlinked from linked) as unlinked`),
    [
      cluster.id,
      facts.name,
      facts.display_name,
      facts.uid,
      facts.version,
      facts.platform,
      facts.distribution,
      facts.api_server_url,
      facts.cluster_cidr,
      facts.service_cidr,
      facts.dns_domain,
      facts.cloud_provider,
      facts.cloud_region,
      facts.cloud_account_id,
      facts.status,
      facts.agent_version,
      JSON.stringify(facts.collection ?? null),
      snapshot.at,
      snapshot.stamp,
      snapshot.streamSeq ?? null,
      assetStatus,
      cluster.asset_id,
      JSON.stringify(kindDigests),
      rowsWritten,
      linkage?.environmentId ?? null,
      linkage?.nodes.addressPairs.nodeNames ?? [],
      linkage?.nodes.addressPairs.ips ?? [],
      linkage?.nodes.nodeNames ?? [],
    ],
  );
}

/**
 * The figures the reads aggregate, kept beside the rows they describe:
 * per node (its pods' requests and limits), per namespace (pods, workloads,
 * services and their sums) and per cluster (node, namespace and workload
 * counts, pod phases, waiting reasons, node capacity and usage). Triggers
 * keep them as each statement writes those rows (migrations/0023); this is
 * the full recompute from every row of the cluster, which writes only what
 * changed and ends a deferral (deferRollups).
 */
export async function refreshRollups(
  tx: Queryable,
  clusterId: string,
): Promise<void> {
  await execute(tx, prepared('select k8s_refresh_rollups($1)'), [clusterId]);
}

/**
 * Until refreshRollups runs in this transaction, the triggers leave the
 * figures alone: for a transaction that writes a cluster's rows wholesale
 * and then recomputes them (a first sync). Rolled back with it.
 */
export async function deferRollups(tx: Tx): Promise<void> {
  await execute(tx, "select set_config('k8s.rollups', 'deferred', true)");
}

export interface LinkageCounts {
  linked: number;
  unlinked: number;
}

/** The nodes a linkage reads: each node's name, and its (name, IP) pairs. */
export interface NodeLinkage {
  nodeNames: readonly string[];
  addressPairs: { nodeNames: string[]; ips: string[] };
}

/**
 * Node-host linkage as CTEs, `m` the nodes with the host each links to and
 * `linked` its counts (a statement of its own, or ridden by the cluster's
 * update). `$c`: the cluster, `$e` its environment, `$p`/`$i` the (name, IP)
 * pairs, `$n` the names, each the parameter number given.
 */
function linkageCtes(n: {
  c: number;
  e: number;
  p: number;
  i: number;
  n: number;
}): string {
  return `ips as (
       select * from unnest($${n.p}::text[], $${n.i}::inet[]) as a(node_name, ip)
     ),
     m as (
       select nd.id, coalesce(
         (select h.id from hosts h
          where h.environment_id = $${n.e} and lower(h.hostname) = lower(nd.name)
          order by h.created_at, h.id limit 1),
         (select h.id from ips
          join hosts h on h.environment_id = $${n.e} and h.ip_address = ips.ip
          where ips.node_name = nd.name
          order by h.created_at, h.id limit 1)
       ) as host_id
       from k8s_nodes nd
       where nd.cluster_id = $${n.c} and nd.name = any($${n.n}::text[])
     ),
     u as (
       update k8s_nodes nd set host_id = m.host_id
       from m where nd.id = m.id and nd.host_id is distinct from m.host_id
       returning 1
     ),
     linked as (
       select count(*) filter (where host_id is not null)::int as linked,
              count(*) filter (where host_id is null)::int as unlinked
       from m
     )`;
}

/**
 * Node-host linkage: a host in the cluster's environment whose hostname is
 * the node's name, else one whose IP is one of the node's addresses. Run for
 * every node of the snapshot each sync, so a host registered later is found;
 * a link is written only when it changes.
 */
export async function linkNodesToHosts(
  tx: Queryable,
  clusterId: string,
  environmentId: string,
  nodes: NodeLinkage,
): Promise<LinkageCounts> {
  return queryOne<{ linked: number; unlinked: number }>(
    tx,
    prepared(`with ${linkageCtes({ c: 1, e: 2, p: 3, i: 4, n: 5 })}
     select linked, unlinked from linked`),
    [
      clusterId,
      environmentId,
      nodes.addressPairs.nodeNames,
      nodes.addressPairs.ips,
      nodes.nodeNames,
    ],
  );
}
