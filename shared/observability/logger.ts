/**
 * The one Logger. Structured JSON (Powertools); never log a payload value, a
 * token or a query parameter value that could be a secret. Its level is the
 * configuration's LOG_LEVEL.
 *
 * A Powertools Logger holds one Lambda context (function name, request id)
 * and one set of keys: right in AWS, where a process runs one function's
 * invocations one at a time. The local stack runs every function in one
 * process with invocations in flight together, so it runs each in
 * `inOwnLoggerScope`: there `logger` is a child Logger of that invocation
 * alone, and its context and keys are the invocation's own. Everywhere else
 * (AWS, the local stack outside an invocation, tests calling a handler
 * directly) `logger` is the one root Logger, as before.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger } from '@aws-lambda-powertools/logger';
import { logLevelOf } from '../config.ts';

const root = new Logger({
  serviceName: 'k8s-inventory',
  logLevel: logLevelOf(),
});

/** The invocation's Logger; emptied when the invocation ends. */
const scope = new AsyncLocalStorage<{ logger: Logger | undefined }>();

/**
 * The Logger in effect: the invocation's own in a scope, the root otherwise.
 * Its methods are resolved on each access, so `logger.info(...)` and the
 * middleware's `addContext`/`resetKeys` reach the current invocation's
 * Logger. A property set on `logger` itself (a test's `vi.spyOn`) stays on
 * the façade and is seen in every scope; the spied original then runs with
 * the façade as `this`, which resolves again.
 */
export const logger: Logger = new Proxy(Object.create(Logger.prototype), {
  get(facade, property, receiver) {
    if (Object.hasOwn(facade, property)) {
      return Reflect.get(facade, property, receiver);
    }
    const current = scope.getStore()?.logger ?? root;
    const value = Reflect.get(current, property, current);
    return typeof value === 'function' ? value.bind(current) : value;
  },
}) as Logger;

/**
 * Runs `fn` as one invocation with a Logger of its own (a child of the root:
 * same level, service and persistent keys), so the Lambda context its
 * middleware adds is seen only by the lines this invocation writes. Once it
 * has ended, a line from work it left behind (a timer, a pool's event
 * handler started in its scope) goes to the root again and names no
 * invocation, rather than one long over.
 */
export async function inOwnLoggerScope<R>(fn: () => Promise<R>): Promise<R> {
  const own = idle.pop() ?? (root.createChild() as Logger);
  const invocation = { logger: own as Logger | undefined };
  try {
    return await scope.run(invocation, fn);
  } finally {
    invocation.logger = undefined;
    idle.push(own);
  }
}

/**
 * Child Loggers of ended invocations, handed to the next ones: making a
 * child costs about 0.1 ms of CPU, a request's worth. Reuse is what AWS does
 * with its one Logger: every handler's middleware (observed()) gives it the
 * new invocation's context first and clears the invocation's keys last.
 */
const idle: Logger[] = [];
