/**
 * Shared set-up for benchmarks: a PostgreSQL server (DATABASE_URL's, else an
 * embedded one under a temp dir) and a fresh migrated database.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startEmbeddedPostgres } from '../infra/local/embedded-postgres.ts';
import { migrate } from '../shared/db/migrate.ts';
import { createPool, type Db, query } from '../shared/db/pool.ts';
import { databaseUrl, freePort } from '../test/helpers/global-setup.ts';

export interface BenchDatabase {
  url: string;
  db: Db;
  close(): Promise<void>;
}

export interface BenchDatabaseOptions {
  /**
   * Keep the database when it already exists on DATABASE_URL's server (it
   * is migrated to the latest schema either way): a benchmark that checks
   * it holds what it needs skips its seeding.
   */
  reuse?: boolean;
}

/**
 * `name`, plus BENCH_DB_SUFFIX when set: runs sharing one PostgreSQL
 * server each keep their own databases.
 */
export async function benchDatabase(
  baseName: string,
  options: BenchDatabaseOptions = {},
): Promise<BenchDatabase> {
  const name = `${baseName}${process.env.BENCH_DB_SUFFIX ?? ''}`;
  if (!/^[a-z_][a-z0-9_]*$/.test(name)) {
    throw new Error(`not a database name: ${name}`);
  }
  let adminUrl = process.env.DATABASE_URL;
  let stop: (() => Promise<void>) | undefined;
  let dir: string | undefined;
  if (!adminUrl) {
    dir = await mkdtemp(join(tmpdir(), 'bench-pg-'));
    const server = await startEmbeddedPostgres({
      dataDir: join(dir, 'data'),
      port: await freePort(),
      ephemeral: true,
    });
    adminUrl = server.url;
    stop = server.stop;
  }
  const admin = createPool({ connectionString: adminUrl, max: 1 });
  const exists =
    (await query(admin, 'select 1 from pg_database where datname = $1', [name]))
      .length > 0;
  if (!(options.reuse && exists)) {
    await query(admin, `drop database if exists ${name} with (force)`);
    await query(admin, `create database ${name}`);
  }
  const url = databaseUrl(adminUrl, name);
  await migrate(url, 'migrations');
  const db = createPool({ connectionString: url, max: 8 });
  return {
    url,
    db,
    async close() {
      await db.end();
      // A reused database stays for the next run.
      if (!options.reuse) {
        await query(admin, `drop database if exists ${name} with (force)`);
      }
      await admin.end();
      await stop?.();
      if (dir) await rm(dir, { recursive: true, force: true });
    },
  };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[mid] ?? 0)
    : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

/** The mean; 0 for none. */
export function mean(values: readonly number[]): number {
  return values.length === 0
    ? 0
    : values.reduce((sum, v) => sum + v, 0) / values.length;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const index = Math.min(
    sorted.length - 1,
    Math.ceil((p / 100) * sorted.length) - 1,
  );
  return sorted[Math.max(0, index)] ?? 0;
}

export const ms = (v: number) => `${v.toFixed(0)} ms`;

/**
 * A reading of a set of processes' CPU: ms used so far by each, keyed by
 * pid and start time (a pid the kernel hands out again is another process).
 */
export type CpuReading = ReadonlyMap<string, number>;

/** CPU ms counted over a series of readings of a changing set of processes. */
export interface CpuCounter {
  /** Ms counted since the first reading (0 at it). */
  total: number;
  last: CpuReading;
}

/**
 * The counter after one more reading. Each process adds what it used since
 * the previous reading; one not there before started since, and adds all it
 * used. A process that exited since the previous reading adds nothing more:
 * its last stretch is lost, an undercount, never a subtraction. (Summing the
 * set's totals and subtracting two sums instead goes negative as soon as a
 * busy process leaves the set between them.)
 */
export function advanceCpuCounter(
  counter: CpuCounter | undefined,
  reading: CpuReading,
): CpuCounter {
  if (!counter) return { total: 0, last: reading };
  let added = 0;
  for (const [key, ms] of reading) {
    added += Math.max(0, ms - (counter.last.get(key) ?? 0));
  }
  return { total: counter.total + added, last: reading };
}

/** CPU ms of one process from /proc/PID/stat, keyed by pid and start time. */
async function procCpu(pid: number): Promise<{ key: string; ms: number }> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // The command name is in parentheses and may hold spaces; after ")" the
  // state is field 3: utime, stime are fields 14, 15 and starttime is 22.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return { key: `${pid}@${fields[19]}`, ms: ticks * 10 }; // USER_HZ = 100
}

const counters = new WeakMap<Db, CpuCounter>();

/**
 * The CPU time in ms this database's PostgreSQL processes (its backends,
 * parallel and autovacuum workers: pg_stat_activity's rows for it) have
 * used since the first call for `db` in this process, from /proc: known
 * only when the server runs on this machine (else undefined). Callers
 * subtract two calls. Most of a read's CPU is the server's, and a loaded
 * machine inflates wall clock far more than CPU time.
 *
 * The set of processes changes between calls (pools close idle
 * connections, workers come and go), so each call adds per-process
 * increments to a running count (advanceCpuCounter) rather than summing
 * the set afresh: the count never goes down. What it misses: a process's
 * CPU after the last call it was seen at, and one that started and exited
 * between two calls. Not counted: the server's shared processes
 * (checkpointer, WAL writer) and other databases' or servers' processes on
 * this machine.
 */
export async function postgresCpuMs(db: Db): Promise<number | undefined> {
  const backends = await query<{ pid: number }>(
    db,
    'select pid from pg_stat_activity where datname = current_database()',
  );
  const reading = new Map<string, number>();
  for (const { pid } of backends) {
    try {
      const command = await readFile(`/proc/${pid}/cmdline`, 'utf8');
      if (!command.startsWith('postgres')) return undefined;
      const cpu = await procCpu(pid);
      reading.set(cpu.key, cpu.ms);
    } catch (error) {
      // A backend that exited since it was listed: counted up to the last
      // call it was seen at.
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
      return undefined;
    }
  }
  // None readable: the server is not on this machine.
  if (reading.size === 0) return undefined;
  const counter = advanceCpuCounter(counters.get(db), reading);
  counters.set(db, counter);
  return counter.total;
}

export interface BenchTenant {
  clientSlug: string;
  envSlug: string;
}

/** Every client with every environment (idempotent); the pairs in order. */
export async function createBenchTenants(
  db: Db,
  clients: readonly string[],
  environments: readonly string[],
): Promise<BenchTenant[]> {
  const tenants: BenchTenant[] = [];
  for (const client of clients) {
    await query(
      db,
      `insert into clients (slug, name) values ($1, $1)
       on conflict do nothing`,
      [client],
    );
    for (const env of environments) {
      await query(
        db,
        `insert into environments (client_id, slug, name)
         select id, $2, $2 from clients where slug = $1
         on conflict do nothing`,
        [client, env],
      );
      tenants.push({ clientSlug: client, envSlug: env });
    }
  }
  return tenants;
}

/** What a plan (EXPLAIN ANALYZE lines) used: indexes, seq scans, its time. */
export function planSummary(plan: readonly string[]): {
  indexes: string[];
  seqScans: string[];
  executionMs: string;
} {
  const indexes = new Set<string>();
  const seqScans = new Set<string>();
  for (const line of plan) {
    const index =
      /(?:Index Scan|Index Only Scan)(?: Backward)? using (\S+)|Bitmap Index Scan on (\S+)/.exec(
        line,
      );
    const name = index?.[1] ?? index?.[2];
    if (name) indexes.add(name);
    const seq = /Seq Scan on (\S+)/.exec(line);
    if (seq?.[1]) seqScans.add(seq[1]);
  }
  const executionMs =
    plan
      .find((l) => l.startsWith('Execution Time'))
      ?.replace('Execution Time: ', '') ?? '?';
  return { indexes: [...indexes], seqScans: [...seqScans], executionMs };
}

/** A bench's helper script (`./<file>.ts` beside this one) in a process of its own. */
export function forkTs(
  file: string,
  args: string[] = [],
  env: Record<string, string> = {},
): ChildProcess {
  return fork(new URL(file, import.meta.url), args, {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
  });
}

/**
 * The child's next message; rejected if it exits first. Its exit listener
 * goes with the answer: one left behind per request would pile up on the
 * child (Node warns past 10).
 */
export function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`child exited ${code}`));
    };
    const onMessage = (message: unknown) => {
      child.off('exit', onExit);
      resolve(message as T);
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}
