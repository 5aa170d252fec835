/**
 * Test helpers that read what the sync stored, and tenants to sync into.
 */
import { randomUUID } from 'node:crypto';
import {
  type Db,
  query,
  queryOne,
  withTransaction,
} from '../../shared/db/pool.ts';
import { KIND_ORDER, KINDS } from '../../shared/sync/kinds.ts';
import { syncInventory } from '../../shared/sync/sync.ts';
import {
  type InventoryInput,
  parseInventory,
} from '../../shared/wire/inventory.ts';

export interface Tenant {
  clientId: string;
  environmentId: string;
  clientSlug: string;
  envSlug: string;
}

/** A client and environment with fresh slugs. */
export async function createTenant(
  db: Db,
  clientSlug = `c-${randomUUID().slice(0, 8)}`,
  envSlug = 'production',
): Promise<Tenant> {
  const client = await queryOne<{ id: string }>(
    db,
    `insert into clients (slug, name) values ($1, $1)
     on conflict (slug) do update set name = excluded.name returning id`,
    [clientSlug],
  );
  const env = await queryOne<{ id: string }>(
    db,
    `insert into environments (client_id, slug, name) values ($1, $2, $2) returning id`,
    [client.id, envSlug],
  );
  return { clientId: client.id, environmentId: env.id, clientSlug, envSlug };
}

/** Row counts per kind for one cluster. */
export async function countRows(
  db: Db,
  clusterId: string,
): Promise<Record<string, number>> {
  const sql = KIND_ORDER.map(
    (k) =>
      `select '${k}' as kind, count(*)::int as n from ${KINDS[k].table} where cluster_id = $1`,
  ).join(' union all ');
  const rows = await query<{ kind: string; n: number }>(db, sql, [clusterId]);
  return Object.fromEntries(rows.map((r) => [r.kind, r.n]));
}

/**
 * Every stored row of a cluster, with its row version (xmin): equal dumps
 * mean nothing was written at all.
 */
export async function dumpCluster(
  db: Db,
  clusterId: string,
): Promise<string[]> {
  const parts: string[] = [];
  for (const k of KIND_ORDER) {
    const rows = await query<{ line: string }>(
      db,
      `select xmin::text || ' ' || t::text as line from ${KINDS[k].table} t
       where cluster_id = $1 order by id`,
      [clusterId],
    );
    parts.push(...rows.map((r) => `${k} ${r.line}`));
  }
  const cluster = await query<{ line: string }>(
    db,
    `select t::text as line from clusters t where id = $1`,
    [clusterId],
  );
  parts.push(...cluster.map((r) => `cluster ${r.line}`));
  return parts;
}

/**
 * Holds a cluster's row lock (as a sync takes it) in a transaction of its
 * own, from when this resolves until `release()`.
 */
export async function holdClusterLock(
  db: Db,
  clusterId: string,
): Promise<{ release(): Promise<void> }> {
  let release!: () => void;
  const held = new Promise<void>((resolve) => {
    release = resolve;
  });
  let locked!: () => void;
  const taken = new Promise<void>((resolve) => {
    locked = resolve;
  });
  const holder = withTransaction(db, async (tx) => {
    await tx.query('select 1 from clusters where id = $1 for no key update', [
      clusterId,
    ]);
    locked();
    await held;
  });
  await Promise.race([taken, holder]);
  return {
    async release() {
      release();
      await holder;
    },
  };
}

/**
 * Syncs one snapshot of `agentId`'s cluster into `tenant`: the envelope
 * (type, version, agent, time) around `body`, processed at `now`.
 */
export function syncSnapshot(
  db: Db,
  tenant: Tenant,
  agentId: string,
  snapshot: {
    timestamp: string;
    now: Date;
    body: Omit<
      InventoryInput,
      'type' | 'schema_version' | 'agent_id' | 'timestamp'
    >;
  },
) {
  return syncInventory(
    db,
    { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
    parseInventory({
      type: 'kubernetes',
      schema_version: 1,
      agent_id: agentId,
      timestamp: snapshot.timestamp,
      ...snapshot.body,
    }),
    { now: () => snapshot.now },
  );
}
