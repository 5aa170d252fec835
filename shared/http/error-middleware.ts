/**
 * The one place errors become HTTP responses. A DomainError below 500 keeps
 * its status, code, message and details. At 500 and above the caller gets a
 * generic message (the code of a DomainError is kept, so a 503 still says
 * which service is missing); everything else is a 500 `internal_error`.
 * Errors at 500 and above are logged, without the request's parameters.
 */
import { STATUS_CODES } from 'node:http';
import type { MiddlewareObj } from '@middy/core';
import { DomainError, RateLimitedError } from '../errors.ts';
import { logger } from '../observability/logger.ts';
import { type ApiResult, errorResult } from './response.ts';

/**
 * A DomainError at 500 or above may set `expose = true` when its message is
 * written for callers (and already sanitized); otherwise it is replaced.
 */
interface Exposable {
  expose?: boolean;
}

export function toErrorResult(error: unknown): ApiResult {
  if (error instanceof RateLimitedError) {
    const result = errorResult(error.status, error.code, error.message);
    result.headers = {
      ...result.headers,
      'retry-after': String(error.retryAfterSeconds),
    };
    return result;
  }
  if (error instanceof DomainError && error.status < 500) {
    return errorResult(error.status, error.code, error.message, error.details);
  }
  logger.error('request failed', {
    error: error instanceof Error ? error : String(error),
  });
  if (error instanceof DomainError) {
    const exposed = (error as DomainError & Exposable).expose === true;
    return errorResult(
      error.status,
      error.code,
      exposed ? error.message : genericMessage(error.status),
    );
  }
  return errorResult(500, 'internal_error', genericMessage(500));
}

function genericMessage(status: number): string {
  return (STATUS_CODES[status] ?? 'Internal Server Error').toLowerCase();
}

/** middy middleware: maps any error of the chain to its response. */
export function httpErrors(): MiddlewareObj<unknown, ApiResult> {
  return {
    name: 'httpErrors',
    onError: (request) => {
      request.response = toErrorResult(request.error);
    },
  };
}
