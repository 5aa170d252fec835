/**
 * A stand-in for the Lambda Node.js runtime's bootstrap, run by the Node
 * binary of the runtime's major: loads the handler module given as
 * `<dir>/<file>.<export>` (as the `Handler` property names it) the way the
 * runtime does (`<file>.js` by require() when no package.json makes it a
 * module, else `<file>.mjs` by import(), else `<file>.cjs`), then takes
 * invocations over the IPC channel and answers each with what the handler
 * returned or threw. Like the runtime it sets `_X_AMZN_TRACE_ID` per
 * invocation and hands the handler a Context. Times are
 * `performance.now()`: milliseconds since this process started; `cpuMs` is
 * the process's CPU time (user + system) by then, which a loaded machine
 * does not stretch as it stretches wall-clock time.
 *
 * Plain JavaScript on purpose: it runs with no loader, as the bundle does.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const [dir, handlerName] = process.argv.slice(2);
const dot = handlerName.lastIndexOf('.');
const base = join(dir, handlerName.slice(0, dot));
const exportName = handlerName.slice(dot + 1);
const require = createRequire(join(dir, 'noop.js'));

/**
 * The runtime's order; the bundles live in the temp directory, under no
 * package.json, so `.js` is CommonJS as in /var/task.
 */
async function load() {
  if (existsSync(`${base}.js`))
    return { file: `${base}.js`, module: require(`${base}.js`) };
  if (existsSync(`${base}.mjs`)) {
    return {
      file: `${base}.mjs`,
      module: await import(pathToFileURL(`${base}.mjs`).href),
    };
  }
  if (existsSync(`${base}.cjs`))
    return { file: `${base}.cjs`, module: require(`${base}.cjs`) };
  throw new Error(`no ${base}.js, .mjs or .cjs`);
}

function cpuMs() {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function describe(error) {
  return error instanceof Error
    ? { name: error.name, message: error.message, stack: error.stack }
    : { name: 'Error', message: String(error) };
}

function contextFor(invocation) {
  const deadline = Date.now() + invocation.timeoutMs;
  const name = process.env.AWS_LAMBDA_FUNCTION_NAME;
  const region = process.env.AWS_REGION;
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName: name,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:123456789012:function:${name}`,
    memoryLimitInMB: process.env.AWS_LAMBDA_FUNCTION_MEMORY_SIZE,
    awsRequestId: invocation.requestId,
    logGroupName: process.env.AWS_LAMBDA_LOG_GROUP_NAME,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done: () => {},
    fail: () => {},
    succeed: () => {},
  };
}

let handler;
try {
  const { file, module } = await load();
  handler = module[exportName];
  if (typeof handler !== 'function') {
    throw new Error(`${file} exports no function ${exportName}`);
  }
} catch (error) {
  process.send({ type: 'init-error', error: describe(error) });
  process.disconnect();
  process.exitCode = 1;
}

if (handler !== undefined) {
  process.send({ type: 'ready', at: performance.now(), cpuMs: cpuMs() });
  process.on('message', async (invocation) => {
    const requestId = invocation.requestId ?? randomUUID();
    process.env._X_AMZN_TRACE_ID = `Root=1-${Math.floor(Date.now() / 1000).toString(16)}-${randomUUID().replaceAll('-', '').slice(0, 24)};Parent=${randomUUID().replaceAll('-', '').slice(0, 16)};Sampled=0`;
    try {
      const result = await handler(
        invocation.event,
        contextFor({ ...invocation, requestId }),
      );
      process.send({
        type: 'result',
        id: invocation.id,
        at: performance.now(),
        cpuMs: cpuMs(),
        result: result === undefined ? null : result,
      });
    } catch (error) {
      process.send({
        type: 'error',
        id: invocation.id,
        at: performance.now(),
        cpuMs: cpuMs(),
        error: describe(error),
      });
    }
  });
}
