/**
 * SQLSTATEs are translated here and nowhere else.
 * https://www.postgresql.org/docs/current/errcodes-appendix.html
 */
import { ConflictError, ForbiddenError, ValidationError } from '../errors.ts';

export class DatabaseError extends Error {
  readonly sqlState: string | undefined;
  constructor(
    message: string,
    sqlState: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'DatabaseError';
    this.sqlState = sqlState;
  }
}

/** SQLSTATEs after which the same work may succeed if tried again. */
const TRANSIENT = new Set([
  '40001', // serialization_failure
  '40P01', // deadlock_detected
  '55P03', // lock_not_available (lock_timeout)
  '57014', // query_canceled (statement_timeout)
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '53300', // too_many_connections
  '08000',
  '08003',
  '08006',
  '08001',
  '08004',
]);

/** An error that carries a SQLSTATE: the driver's, or a DatabaseError. */
interface SqlError {
  sqlState: string;
  /** The error itself: the driver's names the column or constraint. */
  source: object;
}

/**
 * The first error along the `cause` chain that carries a SQLSTATE, so a
 * statement's failure is classified the same whatever wrapped it (query()'s
 * ConflictError, a refusal, a transaction's rethrow). Bounded: a cycle of
 * causes ends the walk.
 */
function sqlErrorOf(error: unknown): SqlError | undefined {
  let current = error;
  for (let depth = 0; depth < 8; depth++) {
    if (!current || typeof current !== 'object') return undefined;
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) {
      return { sqlState: code, source: current };
    }
    if (current instanceof DatabaseError && current.sqlState !== undefined) {
      return (
        sqlErrorOf(current.cause) ?? {
          sqlState: current.sqlState,
          source: current,
        }
      );
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

export function sqlStateOf(error: unknown): string | undefined {
  return sqlErrorOf(error)?.sqlState;
}

/** True when retrying the same work later may succeed. */
export function isTransientDbError(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state !== undefined)
    return TRANSIENT.has(state) || state.startsWith('08');
  // Network-level failures from the driver carry errno codes, not SQLSTATEs.
  if (error && typeof error === 'object' && 'code' in error) {
    const code = String((error as { code: unknown }).code);
    return /^E[A-Z]+$/.test(code);
  }
  return false;
}

/** The data errors a refused write can name, without the value itself. */
const DATA_ERRORS: Readonly<Record<string, string>> = {
  '22001': 'a string too long for its column',
  '22003': 'a number out of range for its column',
  '22007': 'a malformed date or time',
  '22008': 'a date or time out of range',
  '22021': 'a character the database cannot store',
  '22P02': 'a value of the wrong form',
  '22P05': 'a character the database cannot store',
  '23502': 'a required value missing',
  '23503': 'a reference to a row that does not exist',
  '23505': 'two rows with the same key',
  '23514': 'a value that breaks a rule',
};

export interface RefusedData {
  /** What was wrong, in words; never the value. */
  problem: string;
  /** The column or constraint PostgreSQL named, when it did. */
  where: string | undefined;
}

/**
 * A statement refused for the data it carried: SQLSTATE class 22 (data
 * exception) or 23 (integrity constraint violation). Whether that is the
 * data's fault for good is the caller's call: a unique violation can also
 * come from a concurrent writer.
 */
export function refusedDataOf(error: unknown): RefusedData | undefined {
  const found = sqlErrorOf(error);
  const state = found?.sqlState;
  if (found === undefined || state === undefined || !/^2[23]/.test(state))
    return undefined;
  const fields = found.source as { column?: unknown; constraint?: unknown };
  const name = (value: unknown) =>
    typeof value === 'string' && value !== '' ? value : undefined;
  const column = name(fields.column);
  const constraint = name(fields.constraint);
  return {
    problem: DATA_ERRORS[state] ?? `SQLSTATE ${state}`,
    where: column
      ? `column ${column}`
      : constraint
        ? `constraint ${constraint}`
        : undefined,
  };
}

/**
 * The driver's error as a domain error (its cause). Only the driver's own:
 * an error that already wraps one (a refusal, a translated error rethrown
 * by a transaction) passes unchanged.
 */
export function translateDbError(error: unknown): unknown {
  const found = sqlErrorOf(error);
  if (found === undefined || found.source !== error) return error;
  const state = found.sqlState;
  if (!(error instanceof Error) || error instanceof DatabaseError) return error;
  switch (state) {
    case '23505':
      return new ConflictError('a row with the same key already exists', {
        cause: error,
      });
    case '23503':
      return new ConflictError('a referenced row does not exist', {
        cause: error,
      });
    case '23514':
    case '22P02':
      return new ValidationError('a value breaks a database rule', {
        cause: error,
      });
    case '42501':
      return new ForbiddenError('not permitted', { cause: error });
    default:
      return new DatabaseError(error.message, state, { cause: error });
  }
}
