/**
 * Invoking handlers locally as Lambda invokes them: each invocation gets a
 * `Context` of its own, with the function's AWS name and a fresh request
 * id, so a failed API request is logged with its own function's name, not
 * the last sync's.
 *
 * Not yet scoped per invocation: the local stack runs every function in one
 * process, and the Logger's context is process-wide, so a line a sync logs
 * while an API request is in flight may carry the request's context.
 * Powertools can keep it per invocation (Lambda's InvokeStore, with
 * AWS_LAMBDA_MAX_CONCURRENCY set), but its SQS FIFO batch processor then
 * lost a failed group's hold in the local stack (local-stack-crash's poison
 * test applied A's next snapshot before the poison one was let go), so that
 * waits for a closer look (docs/decisions.md).
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { functionNames } from '../names.ts';

/** The functions' names, as the stacks name them with the default prefix. */
export const LOCAL_FUNCTION_NAMES = functionNames('k8s-inventory');

export function lambdaContext(
  functionName: string,
  options: { timeoutMs?: number; region?: string } = {},
): Context {
  const deadline = Date.now() + (options.timeoutMs ?? 60_000);
  const region = options.region ?? 'us-east-1';
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

/**
 * Runs `handler(event, context)` as one invocation. Its middleware stack
 * (shared/observability/middleware.ts) gives the Logger this context when
 * it starts and clears its keys when it ends.
 */
export function invoke<E, R>(
  handler: (event: E, context: Context) => Promise<R>,
  event: E,
  context: Context,
): Promise<R> {
  return handler(event, context);
}
