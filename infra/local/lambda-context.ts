/**
 * Invoking handlers locally as Lambda invokes them: each invocation gets a
 * `Context` of its own, with the function's AWS name and a fresh request
 * id, and runs in a Logger scope of its own (inOwnLoggerScope,
 * shared/observability/logger.ts).
 *
 * The local stack runs every function in one process, so a sync, the
 * sweeps and several API requests may be in flight together, where in AWS
 * each runs in a process of its own. The Powertools Logger holds one Lambda
 * context; in its own scope each invocation logs through a child Logger
 * that holds only its context, so every line names the function and request
 * id of the invocation that wrote it, however they overlap.
 *
 * Not Lambda's InvokeStore (AWS_LAMBDA_MAX_CONCURRENCY): the AWS SDK's
 * first request (the poller's first receive) installs its single-context
 * store before any invocation, so overlapping invocations share one
 * context, and the SQS FIFO batch processor, whose state that variable
 * moves into the store, lost a failed record's failure: the local stack's
 * poison test applied a cluster's next snapshot before its failed one was
 * let go (docs/decisions.md).
 */
import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { inOwnLoggerScope } from '../../shared/observability/logger.ts';
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
 * Runs `handler(event, context)` as one invocation, in a Logger scope of its
 * own: its middleware stack (shared/observability/middleware.ts) gives that
 * scope's Logger this context, which no other invocation's line then sees.
 */
export function invoke<E, R>(
  handler: (event: E, context: Context) => Promise<R>,
  event: E,
  context: Context,
): Promise<R> {
  return inOwnLoggerScope(() => handler(event, context));
}
