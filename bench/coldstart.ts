/**
 * `npm run bench -- coldstart [--runs 10] [--only <substring>] [--profile]`: the cold
 * start of every Lambda function as built (the synthesized bundles, run as
 * test/infra/bundles.test.ts runs them: Node 22, CommonJS `index.js` loaded
 * as Lambda's runtime loads it, the template's environment, the login of its
 * group role read through the stand-in of the Parameters and Secrets
 * extension's endpoint, TLS to PostgreSQL through RDS Proxy's stand-in,
 * test/helpers/rds-proxy.ts). Per function: the bundle's size, the time from
 * spawning its process to the module loaded, and to the handler's first
 * answer (import + first query), and the process's CPU time by each, the
 * median of `--runs` pairs of fresh processes, run in rounds (each round
 * one pair of every function and floor): in each pair the first
 * finds no backend of its login in the proxy's pool and the proxy opens one
 * (the first cold start after a deploy), the second is lent that backend
 * (every later cold start, as RDS Proxy pools). Beside them a floor measured
 * the same two ways: a bundle of a handler that only runs `select 1` through
 * pg (bench/coldstart-floor.ts), built with the same esbuild settings
 * (`BUNDLE`) and connected the same way, its URL in the environment (no
 * secret read); and the libraries' floor, the same `select 1` under the
 * libraries every API function loads (middy, the Powertools Logger and
 * Metrics, zod: bench/coldstart-libraries-floor.ts), which tells what is
 * left of the target for the project's own code; and the live floor, the
 * same `select 1` beside one kube_query to the cluster's agent over NATS
 * (bench/coldstart-live-floor.ts), which tells what a live read's round
 * trip through the agent costs by itself (the live reads are shown against
 * it too, in a table of their own). Each API function is
 * asked what a caller asks and does its route's work: the graph of a
 * workload, the live reads through the cluster's agent (its own responder,
 * bench/live-agent.ts, on the stage's NATS), the webhook receiver an
 * Alertmanager notification from a registered source; an error answer is
 * marked as one beside the row. Targets, on a pooled backend: an API
 * function within 1.5× the floor, the sync within 3×.
 * Results: bench/results/coldstart.json (the slowest API function and the
 * sync on docs/slo.md; not written with --only, which measures a part), the
 * table of every function in bench/coldstart-results.md.
 * `--profile`: each pooled run also records V8's CPU profiles of the
 * module's load and of the first answer, and the bench prints, per
 * function, where that CPU went (bench/coldstart-profile.ts); the
 * profiler's cost is then in every time, so nothing is written.
 */
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { BUNDLE, BUNDLE_ALIAS } from '../infra/constructs/service-function.ts';
import { fromRoot } from '../infra/paths.ts';
import { queryOne } from '../shared/db/pool.ts';
import { GROUP_ROLES } from '../shared/db/roles.ts';
import { type RouteDefinition, routes } from '../shared/http/routes.ts';
import {
  commandSubject,
  KUBE_QUERY_VERSION,
  type KubeQueryRequestInput,
} from '../shared/live/kube-query.ts';
import { addWebhookSource } from '../shared/webhooks/sources.ts';
import {
  buildWorld,
  callerEmail,
  pathValuesOf,
} from '../test/helpers/api-world.ts';
import type { BundledFunction } from '../test/helpers/lambda-bundles.ts';
import { httpApiEvent, scheduledEvent } from '../test/helpers/lambda-events.ts';
import {
  type Answer,
  lambdaReservedEnvironment,
  startLambda,
} from '../test/helpers/lambda-process.ts';
import { REGION, startLambdaStage } from '../test/helpers/lambda-stage.ts';
import { sqsRecordOf } from '../test/helpers/sqs-record.ts';
import { tinyInventory } from '../test/helpers/tiny-inventory.ts';
import {
  COLDSTART_MEASURES,
  coldStartFigures,
  coldStartNotes,
  FLOOR_NAME,
  LIBRARIES_FLOOR_NAME,
  LIVE_FLOOR_NAME,
  type ColdStartRow as Row,
} from './coldstart-figures.ts';
import {
  addProfiledRun,
  chargesTable,
  groupsTable,
  type ProfiledPhases,
} from './coldstart-profile.ts';
import { benchDatabase, forkTs, median, nextMessage } from './common.ts';
import { writeResults } from './results.ts';

function flag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
}
const RUNS = Number(flag('runs') ?? 10);
const ONLY = flag('only');
const PROFILE = process.argv.includes('--profile');

const bench = await benchDatabase('k8s_inventory_bench_coldstart');
const world = await buildWorld(bench.db);
const stage = await startLambdaStage(bench.url, bench.db);
const caller = callerEmail('client-wide', 'admin');
const ids = pathValuesOf(world.target);
const hour = 3_600_000;
const queries: Record<string, Record<string, string>> = {
  'get-cluster-metrics': {
    start: new Date(Date.now() - hour).toISOString(),
    end: new Date().toISOString(),
  },
  'get-cluster-graph': { kind: 'Deployment', namespace: 'shop', name: 'web' },
  // What the agent's cluster serves (bench/live-fixtures.ts).
  'get-live-manifest': { kind: 'Deployment', namespace: 'icx', name: 'icx-db' },
  'list-live-revisions': {
    kind: 'Deployment',
    namespace: 'icx',
    name: 'icx-db',
  },
  'get-live-logs': { namespace: 'icx', pod: 'icx-db-1' },
};

// The live routes read through the cluster's agent: its own responder in a
// process of its own (bench/live-agent.ts, over a fake Kubernetes API
// serving a real Deployment as read), on the stage's NATS with .creds of
// its own, and an agent version every live read accepts.
const { agent_id: agentId } = await queryOne<{ agent_id: string }>(
  bench.db,
  `update clusters set agent_version = 'v0.9.0' where id = $1
   returning agent_id`,
  [world.target.id],
);
const liveAgent = forkTs(
  './live-agent.ts',
  [stage.nats.url, agentId, 'as-read'],
  {
    NATS_CREDS: (await stage.nats.userCreds('bench-live-agent'))!,
    NATS_CA: stage.nats.ca!.file,
  },
);
await nextMessage(liveAgent);

// The webhook receiver stores an Alertmanager notification from a source
// of the cluster's client, as Alertmanager sends it.
const { slug: clientSlug } = await queryOne<{ slug: string }>(
  bench.db,
  'select slug from clients where id = $1',
  [world.target.clientId],
);
const webhook = await addWebhookSource(bench.db, {
  clientSlug,
  kind: 'alertmanager',
});
const alertmanagerBody = JSON.stringify(
  (
    JSON.parse(
      readFileSync(
        fromRoot('test/fixtures/alertmanager/alertmanager-v4-completed.json'),
        'utf8',
      ),
    ) as { body: unknown }
  ).body,
);

interface Subject {
  name: string;
  kind: Row['kind'];
  fn: BundledFunction;
  environment: () => Record<string, string>;
  event: () => unknown;
}

/**
 * The live floor's NATS login (a user of the stage's account, as the API's
 * is) and the kube_query it sends: the manifest get-live-manifest asks for.
 */
const liveFloorQuery: KubeQueryRequestInput = {
  type: 'kube_query',
  version: KUBE_QUERY_VERSION,
  request_id: randomUUID(),
  actor: caller,
  query: 'manifest',
  kind: 'Deployment',
  namespace: 'icx',
  name: 'icx-db',
};
const liveFloorEnvironment = {
  FLOOR_NATS_URL: stage.nats.url,
  FLOOR_NATS_CREDS: (await stage.nats.userCreds('bench-live-floor'))!,
  FLOOR_NATS_CA: stage.nats.ca!.pem,
  FLOOR_NATS_SUBJECT: commandSubject(agentId),
  FLOOR_KUBE_QUERY: JSON.stringify(liveFloorQuery),
};

/** The routes that read through the agent, measured against the live floor. */
const liveRoutes = new Set<string>(
  routes.filter((r) => (r as RouteDefinition).liveReads).map((r) => r.name),
);

/** The floors, each bundled like the functions into a directory of its own. */
const floorDirs: string[] = [];

/**
 * A floor: `entry` bundled with the functions' esbuild settings, connected
 * as the floor connects (its URL in the environment, no secret read), with
 * the environment the template gives every function's observability.
 */
async function floorSubject(
  entry: string,
  name: string,
  kind: 'floor' | 'libraries' | 'live-floor',
): Promise<Subject> {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-inventory-floor-'));
  floorDirs.push(dir);
  await build({
    entryPoints: [fromRoot(entry)],
    outfile: join(dir, BUNDLE.file),
    bundle: true,
    platform: 'node',
    format: BUNDLE.format,
    target: BUNDLE.target,
    mainFields: [...BUNDLE.mainFields],
    external: [...BUNDLE.external],
    alias: { ...BUNDLE_ALIAS },
    minify: true,
    sourcemap: true,
    sourcesContent: false,
    logLevel: 'error',
  });
  const fn: BundledFunction = {
    name,
    stack: 'bench',
    logicalId: {
      floor: 'Floor',
      libraries: 'LibrariesFloor',
      'live-floor': 'LiveFloor',
    }[kind],
    dir,
    handler: 'index.handler',
    runtime: 'nodejs22.x',
    memorySize: 512,
    timeoutSeconds: 15,
    environment: {},
  };
  const url = new URL(stage.urlAs(GROUP_ROLES.reader));
  url.hostname = stage.proxy.host;
  url.port = String(stage.proxy.port);
  url.search = '?sslmode=verify-full';
  // The log level and the Powertools settings every function's template
  // holds (infra/constructs/service-function.ts), taken from one of them.
  const observability = Object.fromEntries(
    Object.entries(stage.fn('api-get-cluster').environment)
      .filter(([key]) => key.startsWith('POWERTOOLS_') || key === 'LOG_LEVEL')
      .map(([key, value]) => [key, String(value)]),
  );
  return {
    name: fn.name,
    kind,
    fn,
    environment: () => ({
      ...lambdaReservedEnvironment(fn, REGION),
      ...observability,
      NODE_EXTRA_CA_CERTS: stage.proxy.caFile,
      FLOOR_DATABASE_URL: url.toString(),
      ...(kind === 'live-floor' ? liveFloorEnvironment : {}),
    }),
    event: () => ({}),
  };
}

function subjects(): Subject[] {
  const out: Subject[] = [];
  for (const route of routes) {
    const fn = stage.fn(`api-${route.name}`);
    out.push({
      name: route.name,
      kind: 'api',
      fn,
      environment: () => stage.environmentOf(fn),
      event: () => {
        const event = httpApiEvent({
          method: route.method,
          routePath: route.path,
          pathParameters: { ...ids, sourceID: webhook.id },
          email: caller,
          ...(queries[route.name] ? { query: queries[route.name] } : {}),
          ...(route.method === 'POST' ? { body: alertmanagerBody } : {}),
        });
        if (route.name === 'receive-webhook') {
          event.headers.authorization = `Bearer ${webhook.secret}`;
        }
        return event;
      },
    });
  }
  const agent = randomUUID();
  const sync = stage.fn('sync');
  out.push({
    name: 'sync',
    kind: 'sync',
    fn: sync,
    environment: () => stage.environmentOf(sync),
    // One tiny snapshot per run, newer each time, so each one applies.
    event: () => ({
      Records: [
        sqsRecordOf(
          `proxima.acme.production.${agent}.kubernetes`,
          JSON.stringify(tinyInventory(agent, new Date())),
        ),
      ],
    }),
  });
  for (const name of ['sweep-stale-clusters', 'sweep-event-retention']) {
    const fn = stage.fn(name);
    out.push({
      name,
      kind: 'other',
      fn,
      environment: () => stage.environmentOf(fn),
      event: () => scheduledEvent(name),
    });
  }
  const admin = stage.fn('admin');
  out.push({
    name: 'admin',
    kind: 'other',
    fn: admin,
    environment: () => stage.environmentOf(admin),
    event: () => ({ command: 'webhook-list', client: 'acme' }),
  });
  return out;
}

interface Run {
  importMs: number;
  answerMs: number;
  importCpuMs: number;
  answerCpuMs: number;
  failed?: string;
}

/** With --profile: each subject's pooled runs' CPU, by phase and charge. */
const profiled = new Map<Subject, ProfiledPhases>();

/**
 * One fresh process: spawned, loaded, invoked once, killed; with
 * `profile`, its CPU profiles charged into `profiled`.
 */
async function run(subject: Subject, profile = false): Promise<Run> {
  const profileDir = profile
    ? mkdtempSync(join(tmpdir(), 'k8s-inventory-profile-'))
    : undefined;
  const spawned = performance.now();
  const lambda = startLambda(subject.fn, subject.environment(), stage.node, {
    cpuProfileDir: profileDir,
  });
  try {
    const loaded = await lambda.loaded;
    const importMs = performance.now() - spawned;
    const answer = await lambda.invoke(subject.event());
    return {
      importMs,
      answerMs: performance.now() - spawned,
      importCpuMs: loaded.cpuMs,
      answerCpuMs: answer.cpuMs,
      ...failureOf(answer),
    };
  } finally {
    await lambda.stop();
    if (profileDir !== undefined) {
      const phases = profiled.get(subject) ?? {
        load: new Map(),
        firstAnswer: new Map(),
        runs: 0,
      };
      profiled.set(subject, phases);
      addProfiledRun(phases, profileDir, join(subject.fn.dir, BUNDLE.file));
      rmSync(profileDir, { recursive: true, force: true });
    }
  }
}

/**
 * A run that threw, or an API function's error response: a cold start is
 * measured on the answer a caller wants, not on a 4xx that skipped the
 * route's work.
 */
function failureOf(answer: Answer): { failed?: string } {
  if (answer.error) {
    return { failed: `${answer.error.name}: ${answer.error.message}` };
  }
  const { statusCode, body } = (answer.result ?? {}) as {
    statusCode?: number;
    body?: string;
  };
  return statusCode !== undefined && statusCode >= 400
    ? { failed: `answered ${statusCode}: ${String(body).slice(0, 120)}` }
    : {};
}

/** Until the proxy holds an idle backend again (at most a few seconds). */
async function backendReturned(): Promise<void> {
  const until = Date.now() + 5_000;
  while (stage.proxy.idleBackends === 0 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Pooled runs that found no idle backend and had one opened. */
let unpooled = 0;

interface Runs {
  /** On a backend the proxy lends from its pool. */
  pooled: Run[];
  /** On one it opens. */
  opened: Run[];
}

/** One pair of fresh processes: on a backend the proxy opens, then on one it lends. */
async function pair(subject: Subject, runs: Runs): Promise<void> {
  stage.proxy.drain();
  runs.opened.push(await run(subject));
  await backendReturned();
  const before = stage.proxy.backendsOpened;
  runs.pooled.push(await run(subject, PROFILE));
  if (stage.proxy.backendsOpened !== before) unpooled++;
}

function rowOf(subject: Subject, { pooled, opened }: Runs): Row {
  const mid = (runs: Run[], key: keyof Omit<Run, 'failed'>) =>
    median(runs.map((r) => r[key]));
  const failed = [...pooled, ...opened].find((r) => r.failed)?.failed;
  return {
    name: subject.name,
    kind: subject.kind,
    bytes: statSync(join(subject.fn.dir, BUNDLE.file)).size,
    importMs: mid(pooled, 'importMs'),
    answerMs: mid(pooled, 'answerMs'),
    importCpuMs: mid(pooled, 'importCpuMs'),
    answerCpuMs: mid(pooled, 'answerCpuMs'),
    newBackendAnswerMs: mid(opened, 'answerMs'),
    ...(liveRoutes.has(subject.name) ? { live: true as const } : {}),
    ...(failed ? { failed } : {}),
  };
}

try {
  const floors = [
    await floorSubject('bench/coldstart-floor.ts', FLOOR_NAME, 'floor'),
    await floorSubject(
      'bench/coldstart-libraries-floor.ts',
      LIBRARIES_FLOOR_NAME,
      'libraries',
    ),
    await floorSubject(
      'bench/coldstart-live-floor.ts',
      LIVE_FLOOR_NAME,
      'live-floor',
    ),
  ];
  const all = [
    ...floors,
    ...subjects().filter((s) => ONLY === undefined || s.name.includes(ONLY)),
  ];
  // In rounds, each running every subject's pair once, not each subject's
  // pairs in a row: a machine whose speed drifts over the bench's minutes
  // (a shared host) then moves the floors and the functions alike, where
  // measured one after another the later functions' ratios took the drift.
  const runs = new Map<Subject, Runs>(
    all.map((subject) => [subject, { pooled: [], opened: [] }]),
  );
  for (let round = 1; round <= RUNS; round++) {
    for (const [subject, into] of runs) await pair(subject, into);
    process.stderr.write(`round ${round} of ${RUNS}\n`);
  }
  const rows = all.map((subject) => rowOf(subject, runs.get(subject)!));
  const floor = rows[0]!.answerMs;
  const floorNew = rows[0]!.newBackendAnswerMs;
  const target = (kind: Row['kind']) =>
    kind === 'api' ? 1.5 : kind === 'sync' ? 3 : undefined;
  const nodeVersion = execFileSync(stage.node, ['--version'], {
    encoding: 'utf8',
  }).trim();
  console.log(
    `\nCold start, median of ${RUNS} fresh processes each way (Node ${nodeVersion}); spawn → module loaded → first answer, on a backend the proxy lends (pooled) and on one it opens (new); CPU: the function's process.\n`,
  );
  console.log(
    '| function | bundle KB | import ms | first answer ms | × floor | target | new backend: first answer ms | × floor | import CPU ms | first answer CPU ms |',
  );
  console.log('|---|---:|---:|---:|---:|---|---:|---:|---:|---:|');
  for (const row of rows) {
    const ratio = row.answerMs / floor;
    const limit = target(row.kind);
    const verdict =
      limit === undefined
        ? ''
        : `≤ ${limit}× ${ratio <= limit ? 'met' : 'MISSED'}`;
    console.log(
      `| ${row.name} | ${(row.bytes / 1024).toFixed(0)} | ${row.importMs.toFixed(0)} | ${row.answerMs.toFixed(0)} | ${ratio.toFixed(2)} | ${verdict}${row.failed ? ` (answered with an error: ${row.failed})` : ''} | ${row.newBackendAnswerMs.toFixed(0)} | ${(row.newBackendAnswerMs / floorNew).toFixed(2)} | ${row.importCpuMs.toFixed(0)} | ${row.answerCpuMs.toFixed(0)} |`,
    );
  }
  const liveFloor = rows.find((r) => r.kind === 'live-floor');
  const live = rows.filter((r) => r.live);
  if (liveFloor && live.length > 0) {
    console.log('\nThe live reads against the live floor:\n');
    console.log(
      '| function | first answer ms | × live floor | new backend: × live floor |',
    );
    console.log('|---|---:|---:|---:|');
    for (const row of [liveFloor, ...live]) {
      console.log(
        `| ${row.name} | ${row.answerMs.toFixed(0)} | ${(row.answerMs / liveFloor.answerMs).toFixed(2)} | ${(row.newBackendAnswerMs / liveFloor.newBackendAnswerMs).toFixed(2)} |`,
      );
    }
  }
  if (unpooled > 0) {
    console.log(
      `\n${unpooled} pooled run(s) found no idle backend and had one opened.`,
    );
  }
  if (PROFILE) {
    console.log(
      `\nWhere the CPU went, ms a run (the mean of the pooled runs, profiled: the profiler's own cost is in the times above), charged to the innermost frame of the bundle's code in each sample (bench/coldstart-profile.ts):`,
    );
    for (const subject of all) {
      const phases = profiled.get(subject);
      console.log(`\n${subject.name}\n`);
      if (phases === undefined) console.log('(no run answered)');
      else for (const line of chargesTable(phases)) console.log(line);
    }
    console.log('\nBy group, side by side:\n');
    const compared = all.flatMap((subject) => {
      const phases = profiled.get(subject);
      return phases ? [{ name: subject.name, phases }] : [];
    });
    for (const line of groupsTable(compared)) console.log(line);
  }
  if (ONLY === undefined && !PROFILE) {
    await writeResults({
      name: 'coldstart',
      measures: COLDSTART_MEASURES,
      figures: coldStartFigures(rows, RUNS),
      notes: [
        `the functions ran on Node ${nodeVersion} (scripts/node22), the bench itself on the Node in the machine column`,
        ...coldStartNotes(rows),
        ...(unpooled > 0
          ? [
              `${unpooled} pooled run(s) found no idle backend and had one opened`,
            ]
          : []),
      ],
      db: bench.db,
    });
  }
} finally {
  liveAgent.kill();
  for (const dir of floorDirs) rmSync(dir, { recursive: true, force: true });
  await stage.stop();
  await bench.close();
  // The database is gone, and with it the grants naming the run's roles;
  // an embedded server took them with it.
  if (process.env.DATABASE_URL)
    await stage.logins.drop(process.env.DATABASE_URL);
}
