/**
 * `npm run bench -- live`: p50/p99 of the three live routes against the
 * agent's real responder in its own process (bench/live-agent.ts, reading a
 * fake Kubernetes API: a 100 KB Deployment, ten ReplicaSets with pod
 * templates, 200 stamped log lines), through the local API server, a real
 * PostgreSQL (the audit rows) and a nats-server on this machine.
 *
 * For each route, request by request: the agent's own answer time (the
 * same kube_query sent straight over NATS, reply read and parsed: the
 * agent's read of the API and its redaction included), then the route
 * over a kept keep-alive connection, one after the other so both see the
 * same machine, both from a client in its own process
 * (bench/live-client.ts). What the backend adds is the route's figure less
 * the agent's (target: at most 10 ms at p99). Requests are spread over
 * enough users that no per-user budget is spent.
 *
 * The API server runs in this process, alone, so the CPU time this process
 * spends over a route's requests is the backend's (printed per request: it
 * moves less with the machine's load than wall time does). `--profile` also
 * times each SQL statement and the NATS request the server makes (by
 * wrapping the pool and the live-read connection here, not in the code
 * measured), and each request's time inside the server (node:http's
 * diagnostics channels: from its headers read to its answer written), whole
 * and less the NATS request and the SQL, and prints per route what a
 * request spent in each. Then, to tell a stall's cause, each route's
 * slowest requests: the server's steps as spans, the garbage collector's
 * pauses of the server, the agent and the client while the request was out,
 * and how long each process (PostgreSQL's backends and nats-server
 * included) waited for a CPU (Linux's schedstat); BENCH_LIVE_DUMP=<file>
 * writes every request's figures as JSON.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../infra/local/api-server.ts';
import { spawnNatsServer } from '../infra/local/nats-server.ts';
import { signLocalToken } from '../shared/auth/local-jwt.ts';
import type { Db } from '../shared/db/pool.ts';
import {
  commandSubject,
  type KubeQueryRequestInput,
} from '../shared/live/kube-query.ts';
import { getLiveNats, setLiveNatsTarget } from '../shared/live/nats.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
} from '../test/helpers/api-fixtures.ts';
import type { LoadBatch, LoadResult } from './api-load.ts';
import {
  benchDatabase,
  forkTs,
  ms,
  nextMessage,
  percentile,
} from './common.ts';
import { GC_PAUSES_ASKED, type GcPause, watchGc } from './gc-pauses.ts';
import type { LiveBatch, LiveBatchResult, LiveSent } from './live-client.ts';
import { LOG_LINES, MANIFEST_BYTES } from './live-fixtures.ts';
import { type Figure, round, writeResults } from './results.ts';

const REQUESTS = Number(process.env.BENCH_LIVE_REQUESTS ?? 300);
const WARMUP = 30;
const USERS = 40;
const TARGET_ADDED_P99_MS = 10;
const PROFILE = process.argv.includes('--profile');
/** With --profile: how many of each route's slowest requests are shown. */
const SLOWEST = 5;
/** Each route's figures, for bench/results/live.json. */
const figures: Record<string, Figure> = {};

/** Each step's durations while recording is on, steps in the order seen. */
class StepTimes {
  recording = false;
  readonly times = new Map<string, number[]>();
  /** The steps of the request the server holds now (one at a time). */
  #open: Map<string, number> | undefined;
  #openAt = 0;
  #openSpans: Span[] = [];
  /** Each request the server answered: when, and its steps' spans. */
  readonly requests: ServerRequest[] = [];
  add(step: string, ms: number): void {
    if (!this.recording) return;
    const times = this.times.get(step) ?? [];
    times.push(ms);
    this.times.set(step, times);
    if (this.#open === undefined) return;
    this.#open.set(step, (this.#open.get(step) ?? 0) + ms);
    const end = performance.now() - this.#openAt;
    this.#openSpans.push({ step, from: end - ms, to: end });
  }
  requestStarted(): void {
    this.#open = new Map();
    this.#openAt = performance.now();
    this.#openSpans = [];
  }
  /**
   * The request's time in the server, from its headers read to its answer
   * written, whole and less what it waited for: what the backend adds
   * without the client's hop.
   */
  requestEnded(ms: number): void {
    const spent = this.#open;
    this.#open = undefined;
    if (!this.recording || spent === undefined) return;
    const nats = spent.get('nats request') ?? 0;
    let sql = 0;
    for (const [step, t] of spent) if (step.startsWith('sql ')) sql += t;
    this.requests.push({ at: this.#openAt, ms, spans: this.#openSpans });
    this.add('server: request in to answer out', ms);
    this.add('server: less the nats request', ms - nats);
    this.add('server: less the nats request and sql', ms - nats - sql);
  }
  reset(): void {
    this.times.clear();
    this.requests.length = 0;
  }
}

interface Span {
  step: string;
  /** Milliseconds from the request's start in the server. */
  from: number;
  to: number;
}

interface ServerRequest {
  /** performance.now() of this process when the server read its headers. */
  at: number;
  ms: number;
  spans: Span[];
}

/** Times each request the API server answers (node:http's own channels). */
function timeServerRequests(steps: StepTimes): void {
  let started = 0;
  subscribe('http.server.request.start', () => {
    started = performance.now();
    steps.requestStarted();
  });
  subscribe('http.server.response.finish', () => {
    steps.requestEnded(performance.now() - started);
  });
}

/** A statement's name in the profile: its verb and table(s) written or read. */
function statementName(text: string): string {
  const sql = text.replace(/\s+/g, ' ').trim().toLowerCase();
  const written = [
    ...sql.matchAll(/(?:insert into|(?<!do )update) ([a-z_.]+)/g),
  ].map((m) => m[1]);
  if (sql.startsWith('with ') && written.length > 0) {
    return `sql with insert ${written.join(' + ')}`;
  }
  const verb = /^(insert into|update|delete from|select)\b/.exec(sql);
  const table = /(?:insert into|update|from) ([a-z_.]+)/.exec(sql);
  return `sql ${verb?.[1]?.split(' ')[0] ?? sql.slice(0, 12)} ${table?.[1] ?? ''}`;
}

/** Times every statement run on `db` (the pool the API server uses). */
function timeStatements(db: Db, steps: StepTimes): void {
  const run = db.query.bind(db) as (
    text: string,
    values?: unknown[],
  ) => Promise<unknown>;
  Object.assign(db, {
    query: async (text: string, values?: unknown[]) => {
      const started = performance.now();
      try {
        return await run(text, values);
      } finally {
        steps.add(statementName(text), performance.now() - started);
      }
    },
  });
}

/** Times each request on the live-read connection the routes share. */
async function timeNatsRequests(steps: StepTimes): Promise<void> {
  const live = await getLiveNats();
  if (!live) throw new Error('no live-read NATS connection');
  const { connection } = live;
  const request = connection.request.bind(connection);
  connection.request = async (...args) => {
    const started = performance.now();
    try {
      return await request(...args);
    } finally {
      steps.add('nats request', performance.now() - started);
    }
  };
}

interface Scenario {
  route: 'manifest' | 'revisions' | 'logs';
  params: string;
  request: KubeQueryRequestInput;
}

const envelope = {
  type: 'kube_query',
  version: 1,
  actor: 'bench@example.test',
} as const;

const SCENARIOS: Scenario[] = [
  {
    route: 'manifest',
    params: 'kind=Deployment&namespace=icx&name=icx-db',
    request: {
      ...envelope,
      request_id: randomUUID(),
      query: 'manifest',
      kind: 'Deployment',
      namespace: 'icx',
      name: 'icx-db',
    },
  },
  {
    route: 'revisions',
    params: 'kind=Deployment&namespace=icx&name=icx-db',
    request: {
      ...envelope,
      request_id: randomUUID(),
      query: 'revisions',
      kind: 'Deployment',
      namespace: 'icx',
      name: 'icx-db',
    },
  },
  {
    route: 'logs',
    params: `namespace=icx&pod=icx-db-1&tail=${LOG_LINES}`,
    request: {
      ...envelope,
      request_id: randomUUID(),
      query: 'logs',
      namespace: 'icx',
      pod: 'icx-db-1',
      tail: LOG_LINES,
      previous: false,
      timestamps: true,
    },
  },
];

const dataDir = await mkdtemp(join(tmpdir(), 'bench-live-'));
const bench = await benchDatabase('k8s_inventory_bench_live');
const nats = await spawnNatsServer({ dataDir: join(dataDir, 'nats'), port: 0 });
const agentId = randomUUID();
const agent = forkTs('./live-agent.ts', [nats.url, agentId]);
const client = forkTs('./api-load.ts');
const liveClient = forkTs('./live-client.ts');
let server: Awaited<ReturnType<typeof startApiServer>> | undefined;
try {
  await nextMessage<string>(agent);
  const clientId = await insertClient(bench.db, 'acme');
  const environmentId = await insertEnvironment(bench.db, clientId, 'prod');
  const clusterId = await insertCluster(bench.db, {
    clientId,
    environmentId,
    name: 'bench',
    agent_id: agentId,
    agent_version: 'v0.9.0',
  });
  server = await startApiServer({ port: 0, db: bench.db, dataDir });
  await setLiveNatsTarget({ url: nats.url });
  const steps = new StepTimes();
  if (PROFILE) {
    timeStatements(bench.db, steps);
    await timeNatsRequests(steps);
    timeServerRequests(steps);
  }
  const tokens: string[] = [];
  for (let i = 0; i < USERS; i++) {
    const email = `bench-${i}@example.test`;
    await insertGrant(bench.db, { email, role: 'operator', clientId });
    tokens.push(
      await signLocalToken(server.jwtKey, {
        email,
        sub: `bench-${i}`,
        ttlSeconds: 3_600,
      }),
    );
  }

  // The HTTP hop alone, for scale: the same client, a route that reads
  // nothing (the server's /healthz), one request at a time.
  client.send({
    baseUrl: server.url,
    token: '',
    paths: Array.from({ length: WARMUP + REQUESTS }, () => '/healthz'),
    concurrency: 1,
    reuseConnections: true,
  } satisfies LoadBatch);
  const hop = (await nextMessage<LoadResult>(client)).latencies.slice(WARMUP);

  const rows: string[][] = [];
  const profiles: string[][] = [];
  const sent: SentRequest[] = [];
  const serverGc = PROFILE ? watchGc() : [];
  for (const scenario of SCENARIOS) {
    // Each request twice, one after the other, so both see the same
    // machine: the agent's own answer time (the request straight over
    // NATS, its reply parsed), then the route over a kept connection, both
    // from the client's process (bench/live-client.ts); each user sends
    // its share in turn. The warm-up first, then the requests measured.
    const batch = (count: number, pids: LiveBatch['pids']) => {
      const perUser = Math.ceil(count / USERS);
      liveClient.send({
        natsUrl: nats.url,
        subject: commandSubject(agentId),
        query: scenario.request,
        url: `${server?.url}/api/v1/clusters/${clusterId}/live/${scenario.route}?${scenario.params}`,
        tokens: Array.from(
          { length: count },
          (_, i) => tokens[Math.floor(i / perUser) % USERS] ?? '',
        ),
        pids,
      } satisfies LiveBatch);
      return nextMessage<LiveBatchResult>(liveClient);
    };
    await batch(WARMUP, {});
    // A Node process's main thread is its event loop; nats-server's and
    // PostgreSQL's every thread may be on the request's way.
    const pids: LiveBatch['pids'] = PROFILE
      ? {
          server: { pids: [process.pid], threads: 'main' },
          agent: { pids: [agent.pid ?? -1], threads: 'main' },
          client: { pids: [liveClient.pid ?? -1], threads: 'main' },
          nats: { pids: [nats.pid], threads: 'all' },
          postgres: { pids: await backendPids(bench.db), threads: 'all' },
        }
      : {};
    steps.reset();
    steps.recording = PROFILE;
    const cpuBefore = process.cpuUsage();
    const result = await batch(REQUESTS, pids);
    // This process is the API server's alone: its CPU is the backend's.
    const cpu = process.cpuUsage(cpuBefore);
    steps.recording = false;
    const direct = result.sent.map((r) => r.directMs);
    const measured = result.sent.map((r) => r.routeMs);
    const failures = new Map<number, number>();
    for (const { status } of result.sent) {
      if (status !== 200) failures.set(status, (failures.get(status) ?? 0) + 1);
    }
    if (PROFILE) {
      profiles.push(...profileOf(scenario.route, steps, REQUESTS));
      sent.push(
        ...result.sent.map((r, i) => ({
          ...r,
          route: scenario.route,
          server: steps.requests[i],
        })),
      );
    }
    const added99 = percentile(measured, 99) - percentile(direct, 99);
    const key = scenario.route
      .replace(/[^A-Za-z0-9]+/g, '_')
      .replace(/^_|_$/g, '');
    figures[`${key}.added_p99_ms`] = {
      value: round(added99),
      unit: 'ms',
      objective: `Live reads' added latency, p99: ${scenario.route}`,
      target: {
        max: TARGET_ADDED_P99_MS,
        text: `≤ ${TARGET_ADDED_P99_MS} ms over the agent's own answer`,
      },
      detail: `route p99 ${ms1(percentile(measured, 99))}, agent p99 ${ms1(percentile(direct, 99))}; added p50 ${ms1(percentile(measured, 50) - percentile(direct, 50))}`,
    };
    figures[`${key}.route_p99_ms`] = {
      value: round(percentile(measured, 99)),
      unit: 'ms',
    };
    figures[`${key}.server_cpu_ms`] = {
      value: round((cpu.user + cpu.system) / 1000 / REQUESTS),
      unit: 'ms',
    };
    rows.push([
      scenario.route,
      `${(result.replyBytes / 1024).toFixed(0)} KB`,
      ms1(percentile(direct, 50)),
      ms1(percentile(direct, 99)),
      ms1(percentile(measured, 50)),
      ms1(percentile(measured, 99)),
      ms1(percentile(measured, 50) - percentile(direct, 50)),
      ms1(added99),
      added99 <= TARGET_ADDED_P99_MS ? 'yes' : 'NO',
      ms1((cpu.user + cpu.system) / 1000 / REQUESTS),
      failures.size === 0 ? '0' : JSON.stringify([...failures]),
    ]);
  }

  const audited = await bench.db.query(
    "select count(*)::int as n from live_read_audit where outcome = 'ok'",
  );
  console.log(
    `live reads: ${REQUESTS} requests per route (after ${WARMUP} warm-up), one at a time; manifest object ${MANIFEST_BYTES / 1024} KB, ${LOG_LINES} log lines; ${audited.rows[0]?.n} reads audited ok`,
  );
  const header = [
    'route',
    'reply',
    'agent p50',
    'agent p99',
    'route p50',
    'route p99',
    'added p50',
    'added p99',
    `added p99 ≤ ${TARGET_ADDED_P99_MS} ms`,
    'server CPU/req',
    'failures',
  ];
  printTable(header, rows);
  await writeResults({
    name: 'live',
    measures: [
      'shared/live',
      'shared/sanitize',
      'shared/http',
      'shared/auth',
      'shared/db',
      'functions/agent',
      'migrations',
      'bench/live.ts',
    ],
    figures,
    db: bench.db,
  });
  console.log(
    `the HTTP hop alone (GET /healthz, same client): p50 ${ms1(percentile(hop, 50))}, p99 ${ms1(percentile(hop, 99))}`,
  );
  if (PROFILE) {
    console.log('');
    console.log('per request, every measured request of the route counted:');
    printTable(['route', 'step', 'calls/req', 'mean', 'p50', 'p99'], profiles);
    // Autovacuum's runs on the tables each read writes, over the whole run.
    const vacuumed = await bench.db.query<{
      relname: string;
      autovacuum_count: number;
      autoanalyze_count: number;
    }>(
      `select relname, autovacuum_count::int, autoanalyze_count::int
         from pg_stat_user_tables
        where relname in ('live_read_audit', 'api_rate_limits')
        order by relname`,
    );
    console.log(
      `autovacuum over the run: ${vacuumed.rows.map((r) => `${r.relname} ${r.autovacuum_count} vacuums, ${r.autoanalyze_count} analyzes`).join('; ')}`,
    );
    printSlowest(sent, {
      server: serverGc,
      agent: await gcPausesOf(agent),
      client: await gcPausesOf(liveClient),
    });
  }
} finally {
  client.kill();
  liveClient.disconnect();
  agent.disconnect();
  await setLiveNatsTarget(undefined);
  await server?.close();
  await nats.stop();
  await bench.close();
  await rm(dataDir, { recursive: true, force: true });
}

/** One measured request: its direct NATS twin, the route, the server's steps. */
interface SentRequest extends LiveSent {
  route: Scenario['route'];
  server: ServerRequest | undefined;
}

/** The PostgreSQL backends of the server's pool (open after the warm-up). */
async function backendPids(db: Db): Promise<number[]> {
  const { rows } = await db.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database()',
  );
  return rows.map((r) => r.pid);
}

async function gcPausesOf(child: ChildProcess): Promise<GcPause[]> {
  child.send(GC_PAUSES_ASKED);
  return (await nextMessage<{ gcPauses: GcPause[] }>(child)).gcPauses;
}

/**
 * Each route's slowest requests by time added (the route less its direct
 * twin): the server's steps, as spans from the request's arrival, and the
 * garbage collector's pauses of each process while the route's request
 * was out. Then, over every request whose added time is past the route's
 * p50 by 10 ms or more, how many had such a pause, and where.
 */
function printSlowest(
  sent: SentRequest[],
  gc: Record<'server' | 'agent' | 'client', GcPause[]>,
): void {
  const during = (from: number, to: number) =>
    Object.entries(gc).flatMap(([where, pauses]) =>
      pauses
        .filter((p) => p.at < to && p.at + p.ms > from && p.ms >= 0.5)
        .map((p) => ({ where, ...p })),
    );
  const f1 = (v: number) => v.toFixed(1);
  for (const route of new Set(sent.map((r) => r.route))) {
    const mine = sent.filter((r) => r.route === route);
    const added = (r: SentRequest) => r.routeMs - r.directMs;
    const p50 = percentile(mine.map(added), 50);
    const stalled = mine.filter((r) => added(r) >= p50 + 10);
    const gcWhere = new Map<string, number>();
    const waitWhere = new Map<string, number>();
    const count = (m: Map<string, number>, keys: Iterable<string>) => {
      let none = true;
      for (const k of keys) {
        m.set(k, (m.get(k) ?? 0) + 1);
        none = false;
      }
      if (none) m.set('none', (m.get('none') ?? 0) + 1);
    };
    for (const r of stalled) {
      count(
        gcWhere,
        new Set(
          during(r.routeAt, r.routeAt + r.routeMs + 1).map((p) => p.where),
        ),
      );
      count(
        waitWhere,
        Object.entries(r.waited)
          .filter(([, w]) => w >= 5)
          .map(([where]) => where),
      );
    }
    console.log('');
    console.log(
      `${route}: ${stalled.length} of ${mine.length} requests added the route's p50 + 10 ms or more; of those, a GC pause (0.5 ms or more) while out: ${JSON.stringify(Object.fromEntries(gcWhere))}; a run-queue wait of 5 ms or more: ${JSON.stringify(Object.fromEntries(waitWhere))}`,
    );
    for (const r of [...mine]
      .sort((a, b) => added(b) - added(a))
      .slice(0, SLOWEST)) {
      const spans = (r.server?.spans ?? [])
        .map((s) => `${s.step.replace(/^sql /, '')} ${f1(s.from)}–${f1(s.to)}`)
        .join(', ');
      const pauses = during(r.routeAt, r.routeAt + r.routeMs + 1)
        .map((p) => `${p.where} ${p.kind} ${f1(p.ms)} ms`)
        .join(', ');
      const waited = Object.entries(r.waited)
        .filter(([, w]) => w >= 0.5)
        .map(([where, w]) => `${where} ${f1(w)}`)
        .join(', ');
      console.log(
        `  ${new Date(r.routeAt).toISOString().slice(11, 23)} added ${f1(added(r))} ms (agent ${f1(r.directMs)}, route ${f1(r.routeMs)}, server ${f1(r.server?.ms ?? Number.NaN)}): ${spans}${pauses ? `; GC: ${pauses}` : ''}${waited ? `; waited for a CPU: ${waited}` : ''}`,
      );
    }
  }
  const dump = process.env.BENCH_LIVE_DUMP;
  if (dump) writeFileSync(dump, JSON.stringify({ sent, gc }));
}

/** One row per step: how often a request ran it, and its times. */
function profileOf(
  route: string,
  steps: StepTimes,
  requests: number,
): string[][] {
  return [...steps.times].map(([step, times]) => [
    route,
    step,
    (times.length / requests).toFixed(2),
    ms1(times.reduce((a, b) => a + b, 0) / times.length),
    ms1(percentile(times, 50)),
    ms1(percentile(times, 99)),
  ]);
}

function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) =>
    Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)),
  );
  const line = (cells: string[]) =>
    cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  console.log(line(header));
  for (const row of rows) console.log(line(row));
}

function ms1(v: number): string {
  return v < 10 ? `${v.toFixed(1)} ms` : ms(v);
}
