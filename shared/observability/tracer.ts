/**
 * The one Tracer (X-Ray through Powertools), its handler segment, and a span
 * runner for the sync's named steps. Outside Lambda the Tracer disables
 * itself, so locally every span is a plain call.
 *
 * The API functions do not load it: the spec names spans for the sync's
 * steps only, Lambda's active tracing records every invocation's segment
 * (its initialization, invocation and overhead) without it, and the X-Ray
 * SDK it loads was about 20 ms of every API cold start's CPU, a third of
 * the cold-start floor's whole first answer (docs/decisions.md, "No X-Ray
 * SDK in the API functions").
 */
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type { MiddlewareObj } from '@middy/core';

export const tracer = new Tracer({ serviceName: 'k8s-inventory' });

/**
 * The handler's segment (X-Ray in AWS; off elsewhere), before the rest of
 * the stack: `middy().use(traced()).use(observed())`.
 */
// biome-ignore lint/suspicious/noExplicitAny: middy's middlewares are typed per handler; this one works on any.
export function traced(): MiddlewareObj<any, any, Error, any> {
  return captureLambdaHandler(tracer, { captureResponse: false });
}

/**
 * Runs `fn` in an X-Ray subsegment named `name` (the spec's span names:
 * `k8s.process_message`, `k8s.sync_nodes`, ...), recording its error.
 * The subsegment is opened through the SDK's async context, so concurrent
 * steps never close each other's segment.
 */
export function traceSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!tracer.isTracingEnabled()) return fn();
  return tracer.provider.captureAsyncFunc(name, async (subsegment) => {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof Error) subsegment?.addError(error);
      throw error;
    } finally {
      subsegment?.close();
    }
  }) as Promise<T>;
}
