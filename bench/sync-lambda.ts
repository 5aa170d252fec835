/**
 * `npm run bench -- sync-lambda`: the sync handler's own CPU per record as
 * Lambda runs it. The handler is bundled as the deployment bundles it
 * (bench/sync-lambda-runtime.ts through esbuild: `BUNDLE`, minified)
 * and run in a process of its own as Lambda starts it (the runtime's Node
 * major, scripts/node22, with the heap options the runtime's bootstrap
 * gives Node for the function's memory: test/helpers/lambda-process.ts),
 * configured as the deployed function is (INFO logs and EMF metrics on,
 * written to nowhere);
 * this process, the poller's stand-in, sends it SQS events of BENCH_BATCH
 * (5) gzip records as the event source would, one per cluster of
 * BENCH_CLUSTERS (5) medium clusters, and reads its CPU from /proc. No
 * queue emulator, bridge or SQS client shares the measured process.
 *
 * Per record, over BENCH_ROUNDS (6) rounds after each cluster's first sync
 * and one warm round: the handler process's CPU and PostgreSQL's, for a
 * no-change resync and for a 1%-changed one, and their ratio (target: the
 * handler's own CPU at most 2× PostgreSQL's for a no-change resync). No
 * change means none to what is stored: in both, every running pod's usage
 * moves, as metrics-server's figures do at each sync (mutateInventory). Not
 * measured: X-Ray (the tracer is off outside Lambda). `--profile` takes a
 * V8 CPU profile of the handler process over the measured rounds only (one
 * for the no-change rounds, one for the 1%-changed ones; not the first
 * syncs nor the warm round), writes each to BENCH_PROFILE_DIR (the temp
 * dir) and prints its busy time by function, self and total. The profile
 * samples the thread's wall time: on a loaded machine, time spent waiting
 * for a CPU inside a call (a socket write, a GC pause) is charged to it.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { build } from 'esbuild';
import { BUNDLE } from '../infra/constructs/service-function.ts';
import { SYNC_MEMORY_SIZE } from '../infra/function-memory.ts';
import {
  encodeForQueue,
  QueueAttribute,
  toQueuedRecord,
} from '../shared/ingest/queue-message.ts';
import { ensureTenant } from '../shared/tenancy/tenants.ts';
import {
  generateInventory,
  mutateInventory,
} from '../test/fixtures/generate.ts';
import {
  bootstrapNodeOptions,
  lambdaNodeBinary,
} from '../test/helpers/lambda-process.ts';
import { sqsRecordOf } from '../test/helpers/sqs-record.ts';
import { benchDatabase, median, postgresCpuMs } from './common.ts';
import { processCpuMs } from './ingest-stack.ts';
import { type Figure, round, writeResults } from './results.ts';

const CLUSTERS = Number(process.env.BENCH_CLUSTERS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);
const TARGET_RATIO = 2;
const PROFILE = process.argv.includes('--profile');

/** Bundles the runtime stand-in with the handler, as CDK bundles the function. */
async function bundle(): Promise<string> {
  // Inside node_modules so the SDK, left out as Lambda's runtime ships it,
  // resolves from the project's.
  const dir = new URL(
    '../node_modules/.cache/bench-sync-lambda/',
    import.meta.url,
  ).pathname;
  mkdirSync(dir, { recursive: true });
  // .cjs: the cache is under the project's package.json ("type": "module").
  const outfile = join(dir, 'runtime.cjs');
  await build({
    entryPoints: [
      new URL('./sync-lambda-runtime.ts', import.meta.url).pathname,
    ],
    outfile,
    bundle: true,
    platform: 'node',
    format: BUNDLE.format,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    // Profiled: names kept, so the profile says where the time goes.
    minify: !PROFILE,
    external: [...BUNDLE.external],
    logLevel: 'warning',
  });
  return outfile;
}

/** A record as the event source hands it over, its body as the bridge queues it. */
function record(agentId: string, body: Buffer): SQSRecord {
  const subject = `proxima.bench.production.${agentId}.kubernetes`;
  const encoded = encodeForQueue({
    subject,
    streamSeq: 1,
    body,
    contentEncoding: 'gzip',
    maxBytes: 1024 * 1024,
    bucket: 'unused',
    scope: 'bench',
  });
  if (encoded.kind !== 'inline') throw new Error('a medium body goes inline');
  const queued = toQueuedRecord({
    Body: encoded.message.body,
    MessageAttributes: encoded.message.attributes,
  });
  // The subject and a fresh stream sequence come from sqsRecordOf.
  const attributes = Object.entries(queued.messageAttributes ?? {})
    .filter(
      ([name]) =>
        name !== QueueAttribute.subject && name !== QueueAttribute.streamSeq,
    )
    .map(([name, value]) => [name, value.stringValue ?? ''] as const);
  return sqsRecordOf(subject, queued.body, Object.fromEntries(attributes));
}

/** Starts, or stops and writes, the handler process's CPU profile. */
function profile(
  child: ChildProcess,
  message: { profile: 'start' } | { profile: 'stop'; file: string },
): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once('message', (m: { ok: boolean; error?: string }) =>
      m.ok ? resolve() : reject(new Error(m.error)),
    );
    child.send(message);
  });
}

function invoke(child: ChildProcess, event: SQSEvent): Promise<void> {
  return new Promise((resolve, reject) => {
    child.once(
      'message',
      (m: {
        ok: boolean;
        error?: string;
        response?: { batchItemFailures: unknown[] };
      }) => {
        if (!m.ok) reject(new Error(m.error));
        else if ((m.response?.batchItemFailures.length ?? 0) > 0) {
          reject(new Error('the handler failed a record'));
        } else resolve();
      },
    );
    child.send(event);
  });
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

function frameName(node: ProfileNode): string {
  const { functionName, url, lineNumber } = node.callFrame;
  return `${functionName || '(anonymous)'} ${url.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
}

/**
 * Each profile's busy time by function: self (where the CPU was) and total
 * (under which call it was, each function counted once a sample), the top
 * 25 of each.
 */
async function printProfile(dir: string): Promise<void> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  for (const file of files.sort().reverse()) {
    const profile = JSON.parse(await readFile(join(dir, file), 'utf8')) as {
      nodes: ProfileNode[];
      samples: number[];
      timeDeltas: number[];
    };
    const byId = new Map(profile.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of profile.nodes) {
      for (const c of n.children ?? []) parent.set(c, n.id);
    }
    const self = new Map<string, number>();
    const total = new Map<string, number>();
    let busy = 0;
    for (const [i, id] of profile.samples.entries()) {
      const node = byId.get(id);
      const us = profile.timeDeltas[i] ?? 0;
      if (!node || node.callFrame.functionName === '(idle)') continue;
      const key = frameName(node);
      self.set(key, (self.get(key) ?? 0) + us);
      busy += us;
      const seen = new Set<string>();
      for (let at: number | undefined = id; at !== undefined; ) {
        const frame = byId.get(at);
        if (!frame) break;
        const name = frameName(frame);
        if (!seen.has(name)) {
          seen.add(name);
          total.set(name, (total.get(name) ?? 0) + us);
        }
        at = parent.get(at);
      }
    }
    for (const [title, times] of [
      ['self', self],
      ['total', total],
    ] as const) {
      console.log(
        `\n${file}: the handler process's busy time by function (${title}), of ${(busy / 1000).toFixed(0)} ms:`,
      );
      for (const [key, us] of [...times]
        .sort((a, b) => b[1] - a[1])
        .slice(0, title === 'self' ? 30 : 60)) {
        console.log(
          `  ${(us / 1000).toFixed(1).padStart(8)} ms  ${((us / busy) * 100).toFixed(1).padStart(5)}%  ${key}`,
        );
      }
    }
  }
}

const bench = await benchDatabase('k8s_inventory_bench_sync_lambda');
const profileDir = await mkdtemp(join(tmpdir(), 'bench-sync-lambda-'));
let child: ChildProcess | undefined;
try {
  await ensureTenant(bench.db, { clientSlug: 'bench', envSlug: 'production' });
  const runtime = await bundle();
  child = fork(runtime, [], {
    // As Lambda starts it: the runtime's Node major, with the heap its
    // bootstrap sizes from the function's memory.
    execPath: lambdaNodeBinary(),
    execArgv: bootstrapNodeOptions(SYNC_MEMORY_SIZE),
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    env: {
      PATH: process.env.PATH,
      DATABASE_URL: bench.url,
      POWERTOOLS_LOG_LEVEL: 'INFO',
      LOG_LEVEL: 'INFO',
      POWERTOOLS_SERVICE_NAME: 'k8s-inventory',
      POWERTOOLS_METRICS_NAMESPACE: 'K8sInventory',
      POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
      NODE_OPTIONS: '--enable-source-maps=false',
    },
  });
  const handlerProcess = child;
  await new Promise<void>((resolve) =>
    handlerProcess.once('message', () => resolve()),
  );
  // Each cluster's inventory, its no-change (usage moved) or 1%-changed
  // variant, gzip as agents send.
  const clusters = Array.from({ length: CLUSTERS }, (_, i) => {
    const agentId = randomUUID();
    const inventory = generateInventory({
      size: 'medium',
      seed: i + 1,
      agentId,
      clusterName: `lambda-${i}`,
      timestamp: '2026-06-15T12:00:00Z',
    });
    return { agentId, inventory };
  });
  const at = (round: number) =>
    new Date(
      Date.parse('2026-06-15T12:00:00Z') + round * 300_000,
    ).toISOString();
  const body = (
    c: (typeof clusters)[number],
    round: number,
    changed: boolean,
  ) =>
    gzipSync(
      JSON.stringify(
        mutateInventory(c.inventory, {
          seed: round,
          changeFraction: changed ? 0.01 : 0,
          removeFraction: 0,
          timestamp: at(round),
        }),
      ),
    );
  const batchOf = (round: number, changed: boolean): SQSEvent => ({
    Records: clusters.map((c) => record(c.agentId, body(c, round, changed))),
  });
  await invoke(handlerProcess, batchOf(0, false)); // first syncs
  await invoke(handlerProcess, batchOf(1, false)); // warm
  const pid = handlerProcess.pid ?? -1;
  const measure = async (changed: boolean, from: number) => {
    if (PROFILE) await profile(handlerProcess, { profile: 'start' });
    const handler: number[] = [];
    const postgres: number[] = [];
    for (let round = from; round < from + ROUNDS; round++) {
      // Bodies are made before the readings: they are the agent's work.
      const event = batchOf(round, changed);
      const cpu0 = await processCpuMs(pid);
      const pg0 = await postgresCpuMs(bench.db);
      await invoke(handlerProcess, event);
      const cpu1 = await processCpuMs(pid);
      const pg1 = await postgresCpuMs(bench.db);
      if (cpu0 !== undefined && cpu1 !== undefined) {
        handler.push((cpu1 - cpu0) / CLUSTERS);
      }
      if (pg0 !== undefined && pg1 !== undefined) {
        postgres.push((pg1 - pg0) / CLUSTERS);
      }
    }
    if (PROFILE) {
      const file = join(
        process.env.BENCH_PROFILE_DIR ?? profileDir,
        `${changed ? 'changed' : 'no-change'}.cpuprofile`,
      );
      await profile(handlerProcess, { profile: 'stop', file });
    }
    return { handler: median(handler), postgres: median(postgres) };
  };
  const same = await measure(false, 2);
  const changed = await measure(true, 2 + ROUNDS);
  const figures: Record<string, Figure> = {};
  console.log(
    `the bundled sync handler in its own process, events of ${CLUSTERS} medium records, ${ROUNDS} rounds (medians per record):`,
  );
  for (const [name, m] of [
    ['no-change', same],
    ['1% changed', changed],
  ] as const) {
    const ratio = m.handler / m.postgres;
    console.log(
      `  ${name.padEnd(11)} handler ${m.handler.toFixed(1)} ms, PostgreSQL ${m.postgres.toFixed(1)} ms: ${ratio.toFixed(2)}× (target ≤ ${TARGET_RATIO}× for no-change)`,
    );
    const key = name === 'no-change' ? 'same' : 'changed';
    figures[`${key}.handler_cpu_ms`] = { value: round(m.handler), unit: 'ms' };
    figures[`${key}.postgres_cpu_ms`] = {
      value: round(m.postgres),
      unit: 'ms',
    };
    figures[`${key}.ratio`] = {
      value: round(ratio),
      unit: '×',
      ...(key === 'same'
        ? {
            objective: "Sync handler's own CPU per resync against PostgreSQL's",
            target: {
              max: TARGET_RATIO,
              text: `≤ ${TARGET_RATIO}× PostgreSQL's, medium no-change resync`,
            },
            detail: `handler ${m.handler.toFixed(1)} ms, PostgreSQL ${m.postgres.toFixed(1)} ms a record (bundled, batches of ${CLUSTERS}); 1% changed: ${changed.handler.toFixed(1)} vs ${changed.postgres.toFixed(1)} ms`,
          }
        : {}),
    };
  }
  await writeResults({
    name: 'sync-lambda',
    measures: [
      'functions/sync',
      'shared/ingest',
      'shared/sync',
      'shared/wire',
      'shared/events',
      'shared/db',
      'shared/observability',
      'migrations',
      'bench/sync-lambda.ts',
      'bench/sync-lambda-runtime.ts',
    ],
    figures,
    db: bench.db,
  });
} finally {
  if (child?.connected) {
    const exited = new Promise((resolve) => child?.once('exit', resolve));
    child.disconnect();
    await Promise.race([
      exited,
      new Promise((resolve) => setTimeout(resolve, 10_000)),
    ]);
  }
  child?.kill();
  await bench.close();
  if (PROFILE) await printProfile(process.env.BENCH_PROFILE_DIR ?? profileDir);
  await rm(profileDir, { recursive: true, force: true });
}
