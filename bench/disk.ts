/**
 * What a stretch of writes cost on disk: WAL bytes (pg_current_wal_lsn()
 * deltas: the whole server's, so only a server of the bench's own gives
 * the bench's alone) and the growth of the database's tables with their
 * indexes and TOAST (pg_total_relation_size), per unit of work.
 */
import { execute, type Queryable, query } from '../shared/db/pool.ts';

export interface DiskSample {
  lsn: string;
  tableBytes: number;
}

export async function diskSample(db: Queryable): Promise<DiskSample> {
  const [row] = await query<{ lsn: string; bytes: string }>(
    db,
    `select pg_current_wal_lsn()::text as lsn,
            coalesce(sum(pg_total_relation_size(c.oid)), 0)::text as bytes
       from pg_class c
      where c.relkind in ('r', 'm', 'p')
        and c.relnamespace = 'public'::regnamespace`,
  );
  return { lsn: row?.lsn ?? '0/0', tableBytes: Number(row?.bytes ?? 0) };
}

/** Per unit: WAL written and table growth between two samples. */
export function diskSpent(
  before: DiskSample,
  after: DiskSample,
  units: number,
) {
  return {
    walBytes: (lsnBytes(after.lsn) - lsnBytes(before.lsn)) / units,
    tableBytes: (after.tableBytes - before.tableBytes) / units,
    databaseBytes: after.tableBytes,
  };
}

/** A pg_lsn's text ('16/B374D848') as a byte position. */
export function lsnBytes(lsn: string): number {
  const [high, low] = lsn.split('/');
  return (
    Number.parseInt(high ?? '0', 16) * 2 ** 32 + Number.parseInt(low ?? '0', 16)
  );
}

/**
 * The first syncs leave every table freshly loaded: autovacuum's first
 * pass over them (hint bits, which with data checksums are a full-page
 * image each, the visibility map, freezing) would otherwise fall in the
 * window and be counted as the resyncs' WAL and database CPU (it was most
 * of the window's WAL: ~270 of 316 MB in a 20 s sample). A database in
 * steady state has had that pass long ago. The checkpoint after it starts
 * the window as every checkpoint interval starts: each page's first
 * change writes its full image, as each cluster's resync does once per
 * interval at the spec's 5-minute cadence.
 */
export async function settleAfterFirstSync(db: Queryable): Promise<void> {
  await execute(db, 'vacuum (analyze)');
  await execute(db, 'checkpoint');
}
