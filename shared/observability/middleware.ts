/**
 * The one middleware stack every Lambda handler runs first (the API's
 * apiHandler, the sync, the sweeps, the admin and migrate functions):
 *
 * - the Logger's Lambda context (function name, request id, cold start),
 *   its per-invocation keys cleared when the invocation ends;
 * - the stored EMF metrics, flushed when the invocation ends, failed or not
 *   (only when some were stored: most API requests store none, and an empty
 *   flush is a warning line per request);
 * - one `invocation failed` line for an error that leaves the handler. An
 *   error a later middleware turns into a response (the API's error
 *   mapping, which logs 5xx itself) is not logged twice.
 *
 * Use it before the function's own middlewares: `middy().use(observed())`.
 * The Tracer's handler segment is not in it: the functions outside the API
 * add it first, `middy().use(traced()).use(observed())` (shared/
 * observability/tracer.ts says why the API functions do not).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import type { MiddlewareObj } from '@middy/core';
import { logger } from './logger.ts';
import { metrics } from './metrics.ts';

function flushMetrics(): MiddlewareObj {
  const flush = () => {
    if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
  };
  return { name: 'flushMetrics', after: flush, onError: flush };
}

function logFailure(): MiddlewareObj {
  return {
    name: 'logFailure',
    onError: (request) => {
      if (request.response !== undefined) return;
      logger.error('invocation failed', {
        error:
          request.error instanceof Error
            ? request.error
            : String(request.error),
      });
    },
  };
}

// biome-ignore lint/suspicious/noExplicitAny: middy's middlewares are typed per handler; these work on any.
export function observed(): MiddlewareObj<any, any, Error, any>[] {
  // onError runs in reverse: the failure is logged while the logger still
  // has the invocation's context, before injectLambdaContext clears it.
  return [
    injectLambdaContext(logger, { resetKeys: true }),
    flushMetrics(),
    logFailure(),
  ];
}
