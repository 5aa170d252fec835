/**
 * Invoking handlers locally as Lambda invokes them: each invocation gets a
 * `Context` of its own, with the function's AWS name, and runs in a scope
 * of its own.
 *
 * The local stack runs every function in one process, as one Lambda
 * execution environment that takes invocations concurrently (as Lambda
 * Managed Instances do): a sync and several API requests may be in flight
 * together. Powertools keeps its per-invocation state (the Logger's Lambda
 * context and keys, the Metrics' store) in Lambda's InvokeStore when
 * AWS_LAMBDA_MAX_CONCURRENCY is set, as Lambda sets it in such an
 * environment; `invoke` runs each handler inside its own InvokeStore
 * context, so a failed API request is logged with its own function's name
 * and request id, never another invocation's.
 */
import { randomUUID } from 'node:crypto';
import { InvokeStore, InvokeStoreBase } from '@aws/lambda-invoke-store';
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

let invokeStore: Promise<InvokeStoreBase> | undefined;

async function startInvokeStore(): Promise<InvokeStoreBase> {
  // The AsyncLocalStorage-backed store (true: concurrent invocations).
  const store = await InvokeStore.getInstanceAsync(true);
  // Only once the store exists: Powertools refuses to run with the variable
  // set and no store. Any positive number says "concurrent".
  process.env.AWS_LAMBDA_MAX_CONCURRENCY ??= '64';
  return store;
}

/** Runs `handler(event, context)` as one invocation, in its own scope. */
export async function invoke<E, R>(
  handler: (event: E, context: Context) => Promise<R>,
  event: E,
  context: Context,
): Promise<R> {
  invokeStore ??= startInvokeStore();
  const store = await invokeStore;
  return store.run(
    { [InvokeStoreBase.PROTECTED_KEYS.REQUEST_ID]: context.awsRequestId },
    () => handler(event, context),
  );
}
