/**
 * The one way the application runs SQL: `query`, `queryOne`,
 * `queryMaybeOne`, `execute` and `withTransaction`, each translating the
 * driver's errors (shared/db/errors.ts) the same way. Repositories receive a
 * `Db` (a pool) or a `Tx` (a checked-out client inside a transaction) and
 * run plain SQL with `$n` parameters (numbered by SqlParams when built)
 * through these helpers. Besides this module, only the database tooling
 * (migrations, database creation, the embedded server, test set-up) uses
 * `pg` directly.
 */
import { createHash } from 'node:crypto';
import pg from 'pg';
import { translateDbError } from './errors.ts';

export type Row = Record<string, unknown>;

/** Something SQL can run on: the pool, or one client inside a transaction. */
export interface Queryable {
  query<R extends Row = Row>(
    text: string,
    values?: readonly unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/**
 * A statement the server parses and plans once per connection, then only
 * binds and runs: for the sync worker's own statements, run on every
 * message with the same text (docs/decisions.md: the sync's connections
 * may pin a session behind RDS Proxy; the API's never prepare). Named by
 * a digest of its text, so one name is always one text.
 */
export interface PreparedStatement {
  readonly name: string;
  readonly text: string;
}

const preparedByText = new Map<string, PreparedStatement>();

export function prepared(text: string): PreparedStatement {
  let statement = preparedByText.get(text);
  if (statement === undefined) {
    const digest = createHash('sha256').update(text).digest('base64url');
    statement = { name: `s_${digest.slice(0, 24)}`, text };
    preparedByText.set(text, statement);
  }
  return statement;
}

export type Sql = string | PreparedStatement;

function run<R extends Row>(
  db: Queryable,
  sql: Sql,
  values: readonly unknown[],
): Promise<pg.QueryResult<R>> {
  if (typeof sql === 'string') return db.query<R>(sql, values);
  // A wrapper of the driver (a benchmark's explaining one) runs the text.
  if (!(db instanceof pg.Pool || db instanceof pg.Client)) {
    return db.query<R>(sql.text, values);
  }
  return db.query<R>({ name: sql.name, text: sql.text, values: [...values] });
}

export type Db = pg.Pool;
export type Tx = pg.PoolClient;

// int8 and numeric counts come back as strings by default; every bigint this
// schema stores (bytes, sums of bytes) fits a double exactly below 2^53.
pg.types.setTypeParser(pg.types.builtins.INT8, (v) => Number(v));
pg.types.setTypeParser(pg.types.builtins.NUMERIC, (v) => Number(v));

export interface PoolOptions {
  connectionString: string;
  max?: number;
  applicationName?: string;
  /** Per-statement bound in ms applied to every connection of the pool. */
  statementTimeoutMs?: number;
}

export function createPool(options: PoolOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 4,
    application_name: options.applicationName ?? 'k8s-inventory',
    statement_timeout: options.statementTimeoutMs,
    idleTimeoutMillis: 30_000,
    connectionTimeoutMillis: 10_000,
  });
  // An idle client that loses its server emits here; without a listener the
  // process would crash. The pool discards the client on its own.
  pool.on('error', () => {});
  return pool;
}

/** Runs one statement; SQLSTATEs become domain errors. */
export async function query<R extends Row = Row>(
  db: Queryable,
  sql: Sql,
  values: readonly unknown[] = [],
): Promise<R[]> {
  try {
    const result = await run<R>(db, sql, values);
    return result.rows;
  } catch (error) {
    throw translateDbError(error);
  }
}

/** Runs one statement for its effect; resolves to the rows it touched. */
export async function execute(
  db: Queryable,
  sql: Sql,
  values: readonly unknown[] = [],
): Promise<number> {
  try {
    const result = await run(db, sql, values);
    return result.rowCount ?? 0;
  } catch (error) {
    throw translateDbError(error);
  }
}

/**
 * Runs `COPY ... FROM STDIN` (text format) on one client, sending the
 * chunks as they are produced: the next chunk is built while the server
 * reads the last one. Resolves to the rows copied.
 */
export async function copyIn(
  tx: Tx,
  text: string,
  chunks: Iterable<string>,
  /** Called once the last chunk is on its way (the server still reads it). */
  sent?: () => void,
): Promise<number> {
  // Loaded here, not at import: only the sync writes COPY, and every other
  // function's cold start would evaluate it.
  const { from: copyFromStdin } = await import('pg-copy-streams');
  const stream = tx.query(copyFromStdin(text));
  let failure: unknown;
  const done = new Promise<void>((resolve, reject) => {
    stream.on('finish', resolve);
    stream.on('error', (error) => {
      failure ??= error;
      reject(error);
    });
  });
  done.catch(() => {}); // awaited below
  try {
    // After the server's error the stream takes no more data.
    for (const chunk of chunks) {
      if (failure !== undefined) break;
      if (stream.write(chunk)) {
        // Lets the socket take this chunk before the next is built.
        await new Promise<void>((resolve) => setImmediate(resolve));
      } else {
        await new Promise<void>((resolve) => {
          stream.once('drain', resolve);
          stream.once('error', () => resolve());
        });
      }
    }
  } catch (error) {
    // Building a chunk failed: the server abandons the COPY (CopyFail), so
    // the connection is ready for the transaction's rollback.
    if (failure === undefined) {
      stream.destroy(error instanceof Error ? error : new Error(String(error)));
      await done.catch(() => {});
    }
    throw error;
  }
  if (failure === undefined) stream.end();
  sent?.();
  try {
    await done;
  } catch (error) {
    throw translateDbError(error);
  }
  return stream.rowCount;
}

/** Exactly one row, or throws. */
export async function queryOne<R extends Row = Row>(
  db: Queryable,
  sql: Sql,
  values: readonly unknown[] = [],
): Promise<R> {
  const rows = await query<R>(db, sql, values);
  const first = rows[0];
  if (rows.length !== 1 || first === undefined) {
    throw new Error(`expected one row, got ${rows.length}`);
  }
  return first;
}

/** Zero or one row. */
export async function queryMaybeOne<R extends Row = Row>(
  db: Queryable,
  sql: Sql,
  values: readonly unknown[] = [],
): Promise<R | undefined> {
  const rows = await query<R>(db, sql, values);
  if (rows.length > 1)
    throw new Error(`expected at most one row, got ${rows.length}`);
  return rows[0];
}

export interface TransactionOptions {
  /**
   * A bound on the whole transaction in ms: the server enforces it per
   * statement and while idle, and the client rolls back when it passes, so a
   * lock wait counts toward it too.
   */
  timeoutMs?: number;
  /** Server settings for this transaction only (e.g. work_mem). */
  settings?: Record<string, string>;
}

/** Thrown inside a transaction whose deadline passed. */
export class TransactionTimeoutError extends Error {
  constructor(timeoutMs: number, options?: ErrorOptions) {
    super(`transaction exceeded its ${timeoutMs} ms bound`, options);
    this.name = 'TransactionTimeoutError';
  }
}

/** A statement sent on a transaction's client after the transaction ended. */
export class TransactionEndedError extends Error {
  constructor() {
    super('the transaction has ended: no statement may run on its client');
    this.name = 'TransactionEndedError';
  }
}

/**
 * Runs `fn` in one transaction on one client: COMMIT on success, ROLLBACK on
 * any error (and on the deadline), release in all cases.
 */
export async function withTransaction<T>(
  db: Db,
  fn: (tx: Tx) => Promise<T>,
  options: TransactionOptions = {},
): Promise<T> {
  const client = await db.connect();
  let broken = false;
  let timer: NodeJS.Timeout | undefined;
  // The work holds the client through a guard that refuses every statement
  // once the transaction has ended. After the deadline the abandoned work
  // keeps running: its next statement would follow the ROLLBACK and run,
  // and commit, on its own; after the end, the client may be another's.
  let ended = false;
  const tx = endingWith(client, () => ended);
  // A server that ends the session between two statements (a failover, an
  // administrator's pg_terminate_backend) makes the checked-out client emit
  // 'error', which would crash the process with no listener: the pool only
  // listens to idle clients. The next statement fails with the cause, and
  // the client is not handed back.
  const onLost = () => {
    broken = true;
  };
  client.on('error', onLost);
  try {
    const timeoutMs = options.timeoutMs;
    const settings: Record<string, string> = { ...options.settings };
    if (timeoutMs !== undefined) {
      const ms = String(Math.max(1, Math.floor(timeoutMs)));
      settings.statement_timeout = ms;
      settings.idle_in_transaction_session_timeout = ms;
      settings.lock_timeout = ms;
    }
    // BEGIN and the settings go in one round trip (a simple query may hold
    // several statements; it takes no parameters, so each name and value is
    // quoted as a literal). They are local to the transaction (set_config's
    // third argument): nothing leaks into the pooled session, and no SET
    // pins a session behind RDS Proxy.
    const calls = Object.entries(settings).map(
      ([name, value]) =>
        `set_config(${client.escapeLiteral(name)}, ${client.escapeLiteral(value)}, true)`,
    );
    await client.query(
      calls.length === 0 ? 'BEGIN' : `BEGIN; SELECT ${calls.join(', ')}`,
    );
    const work = fn(tx);
    const result =
      timeoutMs === undefined
        ? await work
        : await Promise.race([
            work,
            new Promise<never>((_, reject) => {
              timer = setTimeout(() => {
                ended = true;
                reject(new TransactionTimeoutError(timeoutMs));
              }, timeoutMs);
            }),
          ]);
    // The work is over once its promise settles: a chain it left running
    // must not slip a statement in behind the COMMIT (or the ROLLBACK
    // below), where it would run, and commit, on its own.
    ended = true;
    await client.query('COMMIT');
    return result;
  } catch (error) {
    ended = true;
    try {
      await client.query('ROLLBACK');
    } catch {
      // The connection itself failed: do not hand it back to the pool.
      broken = true;
    }
    if (error instanceof TransactionTimeoutError) {
      // The abandoned work may still be running on this client.
      broken = true;
      throw error;
    }
    throw translateDbError(error);
  } finally {
    if (timer) clearTimeout(timer);
    client.removeListener('error', onLost);
    client.release(broken);
  }
}

/**
 * `client` as the work sees it: the same client, whose `query` throws
 * TransactionEndedError once `isEnded()`; everything else is the client's.
 */
function endingWith(client: Tx, isEnded: () => boolean): Tx {
  const query = (...args: unknown[]) => {
    if (isEnded()) throw new TransactionEndedError();
    return (client.query as (...a: unknown[]) => unknown)(...args);
  };
  return new Proxy(client, {
    get(target, property) {
      if (property === 'query') return query;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
