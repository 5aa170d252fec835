/**
 * The runtime's stand-in (test/helpers/lambda-runtime.mjs, started by
 * lambda-process.ts) gives a bundle the process the Lambda Node.js runtime
 * gives it: Node started with the bootstrap's options for the function's
 * memory, the runtime client's builtins already loaded when the handler's
 * module is, and none it does not load (a builtin the stand-in loaded for
 * itself would be a cost the cold-start bench never charged a bundle). A
 * probe bundle reports what it found.
 */
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CpuProfile } from '../../bench/coldstart-profile.ts';
import type { BundledFunction } from '../helpers/lambda-bundles.ts';
import {
  bootstrapNodeOptions,
  lambdaNodeBinary,
  lambdaReservedEnvironment,
  startLambda,
} from '../helpers/lambda-process.ts';

/** What the probe's module saw as it loaded, and its handler when invoked. */
const PROBE = `
const loadedAtImport = process.moduleLoadList.filter((m) => m.startsWith('NativeModule '));
exports.handler = async (event, context) => ({
  loadedAtImport,
  execArgv: process.execArgv,
  heapLimitMb: require('node:v8').getHeapStatistics().heap_size_limit / 2 ** 20,
  gcExposed: typeof globalThis.gc === 'function',
  traceId: process.env._X_AMZN_TRACE_ID,
  requestId: context.awsRequestId,
  event,
});
`;

/**
 * What aws-lambda-nodejs-runtime-interface-client requires before it loads
 * the handler (RAPIDClient: http; ResponseStream: net; InvokeContext:
 * assert; Errors and LogPatch: util, fs; UserFunction: path).
 */
const RUNTIME_CLIENT_BUILTINS = ['http', 'net', 'assert', 'util', 'fs', 'path'];

/**
 * The builtins loaded in a Node 22 process that does as the runtime client
 * does: an ESM module taking its builtins through createRequire.
 */
function runtimeClientLoads(): string[] {
  const script = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
for (const name of ${JSON.stringify(RUNTIME_CLIENT_BUILTINS)}) require(name);
console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.startsWith('NativeModule '))));
`;
  const file = join(dir, 'runtime-client.mjs');
  writeFileSync(file, script);
  const out = execFileSync(lambdaNodeBinary(), [file], { encoding: 'utf8' });
  return JSON.parse(out) as string[];
}

interface ProbeAnswer {
  loadedAtImport: string[];
  execArgv: string[];
  heapLimitMb: number;
  gcExposed: boolean;
  traceId: string;
  requestId: string;
  event: unknown;
}

let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'k8s-inventory-probe-'));
  writeFileSync(join(dir, 'index.js'), PROBE);
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the runtime stand-in', () => {
  it('starts Node as the bootstrap does and has loaded the runtime client’s builtins, and no others, by the handler’s import', async () => {
    // Arrange
    const fn: BundledFunction = {
      name: 'probe',
      stack: 'test',
      logicalId: 'Probe',
      dir,
      handler: 'index.handler',
      runtime: 'nodejs22.x',
      memorySize: 1024,
      timeoutSeconds: 10,
      environment: {},
    };
    const lambda = startLambda(
      fn,
      lambdaReservedEnvironment(fn, 'eu-west-1'),
      lambdaNodeBinary(),
    );

    // Act
    const answer = await lambda.invoke({ hello: 'world' });
    await lambda.stop();

    // Assert
    expect(answer.error, lambda.output()).toBeUndefined();
    const probe = answer.result as ProbeAnswer;
    expect(probe.execArgv).toEqual(bootstrapNodeOptions(1024));
    expect(probe.execArgv).toContain('--max-old-space-size=922');
    expect(probe.execArgv).toContain('--max-semi-space-size=51');
    expect(probe.gcExposed).toBe(true);
    // The old generation's limit plus the young one's spaces (V8 rounds
    // a semi-space up to a power of two): a fraction of the default Node
    // gives itself on this machine.
    expect(probe.heapLimitMb).toBeGreaterThanOrEqual(922);
    expect(probe.heapLimitMb).toBeLessThanOrEqual(922 + 3 * 64);
    for (const builtin of RUNTIME_CLIENT_BUILTINS) {
      expect(probe.loadedAtImport).toContain(`NativeModule ${builtin}`);
    }
    const runtimeClient = new Set(runtimeClientLoads());
    expect(probe.loadedAtImport.filter((m) => !runtimeClient.has(m))).toEqual(
      [],
    );
    expect(probe.traceId).toMatch(
      /^Root=1-[0-9a-f]{8}-[0-9a-f]{24};Parent=[0-9a-f]{16};Sampled=0$/,
    );
    expect(probe.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(probe.event).toEqual({ hello: 'world' });
  });

  it('records CPU profiles of the load and the first answer only when given a folder', async () => {
    // Arrange: a handler that keeps the CPU busy long enough to be sampled.
    const busyDir = join(dir, 'busy');
    mkdirSync(busyDir, { recursive: true });
    writeFileSync(
      join(busyDir, 'index.js'),
      `exports.handler = async () => {
  const end = performance.now() + 30;
  let spins = 0;
  while (performance.now() < end) spins += 1;
  return { spins };
};`,
    );
    const fn: BundledFunction = {
      name: 'busy',
      stack: 'test',
      logicalId: 'Busy',
      dir: busyDir,
      handler: 'index.handler',
      runtime: 'nodejs22.x',
      memorySize: 512,
      timeoutSeconds: 10,
      environment: {},
    };
    const profiles = join(dir, 'profiles');
    mkdirSync(profiles);
    const lambda = startLambda(
      fn,
      lambdaReservedEnvironment(fn, 'eu-west-1'),
      lambdaNodeBinary(),
      { cpuProfileDir: profiles },
    );

    // Act
    const first = await lambda.invoke({});
    const second = await lambda.invoke({});
    await lambda.stop();

    // Assert
    expect(first.error, lambda.output()).toBeUndefined();
    expect(second.error, lambda.output()).toBeUndefined();
    expect(existsSync(join(profiles, 'load.cpuprofile'))).toBe(true);
    const answer = JSON.parse(
      readFileSync(join(profiles, 'first-answer.cpuprofile'), 'utf8'),
    ) as CpuProfile;
    const handlerNodes = new Set(
      answer.nodes
        .filter((node) => node.callFrame.url.endsWith('/busy/index.js'))
        .map((node) => node.id),
    );
    const handlerSamples = answer.samples.filter((id) => handlerNodes.has(id));
    // The first answer's profile covers the handler. How many samples land
    // in its 30 ms depends on how a loaded machine schedules the profiler's
    // thread (14 of ~300 on a busy CI run): one says it is covered.
    expect(handlerSamples.length).toBeGreaterThan(0);
  });
});
