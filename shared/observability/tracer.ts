/**
 * The one Tracer (X-Ray through Powertools) and a span runner for the sync's
 * named steps. Outside Lambda the Tracer disables itself, so locally every
 * span is a plain call.
 */
import { Tracer } from '@aws-lambda-powertools/tracer';

export const tracer = new Tracer({ serviceName: 'k8s-inventory' });

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
