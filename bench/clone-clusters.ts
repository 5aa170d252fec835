/**
 * Copies of clusters the sync wrote, made in SQL: the scale curve's large
 * worlds (bench/scale.ts) sync a set of template clusters through the real
 * sync and clone the rest from them, since syncing 1,000 medium clusters
 * one by one takes over an hour on a 2-core machine.
 *
 * A clone is its template's rows, table by table, under a new cluster:
 * every table with a cluster_id column (read from the catalog, so a table
 * or column added later is copied too), in foreign-key order, one statement
 * a table; generated and identity columns are left to the table. Ids, and the object uids the agent reports, become fresh values
 * derived from the old one and the new cluster's id (md5), so a reference
 * (a pod's namespace_id, node_id and workload_id, an event's involved_uid)
 * points at the clone's own row. The clusters row gets a new id, asset,
 * agent id, uid, name and slug, and its rollups are computed from its rows
 * as a first sync's are; everything else (collection, timestamps) is the
 * template's as the sync wrote it.
 */
import { randomUUID } from 'node:crypto';
import { type Db, query, withTransaction } from '../shared/db/pool.ts';
import { deferRollups, refreshRollups } from '../shared/sync/repo.ts';
import { slugify } from '../shared/sync/sync.ts';

interface CloneTable {
  name: string;
  columns: string[];
  /** Column → the table its single-column foreign key references. */
  references: Map<string, string>;
}

/** Tables holding a cluster's rows, referenced ones before their referrers. */
export async function cloneTables(db: Db): Promise<CloneTable[]> {
  const rows = await query<{ name: string; columns: string[] }>(
    db,
    `select c.relname as name,
            array_agg(a.attname::text order by a.attnum) as columns
       from pg_class c
       join pg_attribute a
         on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
        and a.attgenerated = '' and a.attidentity = ''
      where c.relnamespace = 'public'::regnamespace
        and c.relkind in ('r', 'p') and not c.relispartition
        and c.relname <> 'clusters'
      group by c.relname
     having bool_or(a.attname = 'cluster_id')`,
  );
  const fks = await query<{ table: string; column: string; ref: string }>(
    db,
    `select con.conrelid::regclass::text as table, a.attname as column,
            con.confrelid::regclass::text as ref
       from pg_constraint con
       join pg_attribute a
         on a.attrelid = con.conrelid and a.attnum = con.conkey[1]
      where con.contype = 'f' and cardinality(con.conkey) = 1
        and con.connamespace = 'public'::regnamespace`,
  );
  const tables = rows.map((r) => ({
    name: r.name,
    columns: r.columns,
    references: new Map(
      fks.filter((f) => f.table === r.name).map((f) => [f.column, f.ref]),
    ),
  }));
  const names = new Set(tables.map((t) => t.name));
  const ordered: CloneTable[] = [];
  const placed = new Set<string>();
  while (ordered.length < tables.length) {
    const ready = tables.filter(
      (t) =>
        !placed.has(t.name) &&
        [...t.references.values()].every(
          (ref) => ref === t.name || !names.has(ref) || placed.has(ref),
        ),
    );
    if (ready.length === 0) throw new Error('cloneTables: a reference cycle');
    for (const t of ready) {
      ordered.push(t);
      placed.add(t.name);
    }
  }
  return ordered;
}

/**
 * The select list copying `table`'s row `r` into the clone ($1 the new
 * cluster id): ids and uids remapped, the rest as it is.
 */
function cloneSelect(table: CloneTable, cloned: ReadonlySet<string>): string {
  const remap = (expr: string) => `md5(${expr}::text || $1::text)::uuid`;
  return table.columns
    .map((col) => {
      const ref = table.references.get(col);
      if (col === 'cluster_id') return '$1::uuid';
      // Another reference to a cluster: to the template is to the clone.
      if (ref === 'clusters') {
        return `case when r.${col} = $2 then $1::uuid else r.${col} end`;
      }
      if (col === 'id' || (ref !== undefined && cloned.has(ref))) {
        return remap(`r.${col}`);
      }
      if (col === 'uid' || col.endsWith('_uid')) {
        return `${remap(`r.${col}`)}::text`;
      }
      return `r.${col}`;
    })
    .join(', ');
}

/**
 * A cluster's rows in a table without a cluster_id column (one that
 * references a cloned table, e.g. an Argo CD application's resources)
 * would not be copied: refused rather than cloned short.
 */
async function refuseUncopiedRows(
  db: Db,
  cloned: ReadonlySet<string>,
): Promise<void> {
  const referrers = await query<{ table: string }>(
    db,
    `select distinct con.conrelid::regclass::text as table
       from pg_constraint con
       join pg_class c on c.oid = con.conrelid and not c.relispartition
      where con.contype = 'f' and con.connamespace = 'public'::regnamespace
        and con.confrelid::regclass::text = any($1)`,
    [[...cloned]],
  );
  for (const { table } of referrers) {
    if (cloned.has(table)) continue;
    const [row] = await query<{ any: boolean }>(
      db,
      `select exists (select 1 from ${table}) as any`,
    );
    if (row?.any) {
      throw new Error(`clone: ${table} holds rows a clone would not copy`);
    }
  }
}

export interface Clone {
  /** The cluster the sync wrote. */
  templateId: string;
  /** The clone's name (its slug is derived from it as the sync does). */
  name: string;
}

/**
 * Clones each of `clones` from its template, one transaction a clone,
 * `concurrency` at a time; returns the new cluster ids in `clones`' order.
 */
export async function cloneClusters(
  db: Db,
  clones: readonly Clone[],
  concurrency: number,
  progress?: (done: number) => void,
): Promise<string[]> {
  const tables = await cloneTables(db);
  const cloned = new Set(tables.map((t) => t.name));
  await refuseUncopiedRows(db, cloned);
  const statements = tables.map(
    (t) =>
      `insert into ${t.name} (${t.columns.join(', ')})
       select ${cloneSelect(t, cloned)} from ${t.name} r where r.cluster_id = $2`,
  );
  const ids: string[] = new Array(clones.length);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < clones.length) {
      const index = next;
      next += 1;
      const clone = clones[index] as Clone;
      const clusterId = randomUUID();
      await withTransaction(db, async (tx) => {
        // As a first sync does: the triggers leave the rollups alone while
        // the rows are written, and they are computed once at the end.
        await deferRollups(tx);
        const assetId = randomUUID();
        await tx.query(
          `insert into assets (id, client_id, environment_id, asset_type, name,
             status, created_at, updated_at)
           select $1, a.client_id, a.environment_id, a.asset_type, $3, a.status,
                  a.created_at, a.updated_at
             from clusters c join assets a on a.id = c.asset_id
            where c.id = $2`,
          [assetId, clone.templateId, clone.name],
        );
        await tx.query(
          `create temp table clone_cluster on commit drop as
             select * from clusters where id = $1`,
          [clone.templateId],
        );
        await tx.query(
          `update clone_cluster
              set id = $1, asset_id = $2, agent_id = gen_random_uuid(),
                  uid = gen_random_uuid()::text, name = $3, slug = $4,
                  display_name = replace(display_name, name, $3)`,
          [clusterId, assetId, clone.name, slugify(clone.name)],
        );
        await tx.query('insert into clusters select * from clone_cluster');
        for (const text of statements) {
          await tx.query(text, [clusterId, clone.templateId]);
        }
        await refreshRollups(tx, clusterId);
      });
      ids[index] = clusterId;
      done += 1;
      progress?.(done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return ids;
}
