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

export function sqlStateOf(error: unknown): string | undefined {
  if (error && typeof error === 'object' && 'code' in error) {
    const code = (error as { code: unknown }).code;
    if (typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  if (error instanceof DatabaseError) return error.sqlState;
  return undefined;
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

export function translateDbError(error: unknown): unknown {
  const state = sqlStateOf(error);
  if (state === undefined || !(error instanceof Error)) return error;
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
