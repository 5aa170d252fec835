/**
 * A stand-in for the Lambda Node.js runtime's bootstrap, run by the Node
 * binary of the runtime's major: loads the handler module given as
 * `<dir>/<file>.<export>` (as the `Handler` property names it) the way the
 * runtime does (`<file>.js` by require() when no package.json makes it a
 * module, else `<file>.mjs` by import(), else `<file>.cjs`), then takes
 * invocations over a pipe (fd 3) and answers each with what the handler
 * returned or threw. Like the runtime it sets `_X_AMZN_TRACE_ID` per
 * invocation (the caller makes it, as the Runtime API hands it over) and
 * hands the handler a Context. Before the handler's module it loads the
 * builtins the runtime's own client has loaded by then
 * (aws-lambda-nodejs-runtime-interface-client: node:http for the Runtime
 * API, node:net for response streaming, node:assert, node:util, node:fs,
 * node:path) and nothing more (no node:crypto, no IPC channel), so a bundle
 * pays for what it loads beyond them, as in AWS. Its process is started with
 * the options the bootstrap gives Node (`bootstrapNodeOptions`,
 * lambda-process.ts). Times are
 * `performance.now()`: milliseconds since this process started; `cpuMs` is
 * the process's CPU time (user + system) by then, which a loaded machine
 * does not stretch as it stretches wall-clock time.
 *
 * Given a folder as a third argument (the cold-start bench's `--profile`),
 * it records V8's CPU profile of loading the module (`load.cpuprofile`) and
 * of the first invocation (`first-answer.cpuprofile`) into it; the runtime
 * in AWS has no such thing, and the profiler's own cost is in the times.
 *
 * Plain JavaScript on purpose: it runs with no loader, as the bundle does.
 */
import { createRequire } from 'node:module';
import { onJsonLines, writeJsonLine } from './json-lines.mjs';

// The runtime client is an ESM bundle that takes its builtins through
// createRequire; an ESM import of a builtin reads all of its exports, whose
// lazy getters load more (undici, zlib, tls: `import 'node:http'`), so this
// file requires its builtins the same way.
const require = createRequire(import.meta.url);
require('node:http');
const { Socket } = require('node:net');
require('node:assert');
require('node:util');
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

/**
 * The channel to the caller (lambda-process.ts), JSON lines each way on file
 * descriptor 3: not Node's IPC channel, whose setup loads child_process,
 * dgram and v8 into a process the Lambda runtime never does.
 */
const channel = new Socket({ fd: 3, readable: true, writable: true });
const send = (message) => writeJsonLine(channel, message);

const [dir, handlerName, profileDir] = process.argv.slice(2);
const dot = handlerName.lastIndexOf('.');
const base = join(dir, handlerName.slice(0, dot));
const exportName = handlerName.slice(dot + 1);

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

/**
 * V8's sampling profiler through the inspector, one profile per phase;
 * nothing (not even node:inspector) is loaded without a folder to write to.
 */
const profiler = profileDir === undefined ? undefined : await startProfiler();

async function startProfiler() {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  const post = (method, params) =>
    new Promise((resolve, reject) =>
      session.post(method, params, (error, result) =>
        error ? reject(error) : resolve(result),
      ),
    );
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 100 });
  await post('Profiler.start');
  const { writeFileSync } = require('node:fs');
  return {
    /** Writes the phase's profile and starts the next one's. */
    async phase(name, next) {
      const { profile } = await post('Profiler.stop');
      writeFileSync(
        join(profileDir, `${name}.cpuprofile`),
        JSON.stringify(profile),
      );
      if (next) await post('Profiler.start');
    },
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
  send({ type: 'init-error', error: describe(error) });
  channel.end();
  process.exitCode = 1;
}

if (handler !== undefined) {
  const ready = { type: 'ready', at: performance.now(), cpuMs: cpuMs() };
  if (profiler) await profiler.phase('load', true);
  send(ready);
  let invocations = 0;
  onJsonLines(channel, async (invocation) => {
    process.env._X_AMZN_TRACE_ID = invocation.traceId;
    let answer;
    try {
      const result = await handler(invocation.event, contextFor(invocation));
      answer = {
        type: 'result',
        id: invocation.id,
        at: performance.now(),
        cpuMs: cpuMs(),
        result: result === undefined ? null : result,
      };
    } catch (error) {
      answer = {
        type: 'error',
        id: invocation.id,
        at: performance.now(),
        cpuMs: cpuMs(),
        error: describe(error),
      };
    }
    invocations += 1;
    if (profiler && invocations === 1) {
      await profiler.phase('first-answer', false);
    }
    send(answer);
  });
}
