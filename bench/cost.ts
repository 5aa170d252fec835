/**
 * `npm run bench -- cost [--prices=bench/aws-prices-2026-12.json]`: writes
 * docs/cost.md, the monthly AWS bill of 100, 1,000 and 10,000 clusters on
 * the spec's 5-minute interval, line by line, and where each fleet meets
 * its first limit. It runs no bench: its measured inputs are the results
 * files (bench/results/ingest-steady.json: a medium resync's duration, the
 * worker's and PostgreSQL's CPU, WAL and table growth; sync.json: how
 * small and large resyncs compare with a medium one; api.json: a read's
 * duration and PostgreSQL CPU), the deployment's shape is read from the
 * synthesized CDK app (memory, architecture, concurrency, instance class,
 * the bridge's task), and the only hand-entered inputs are the list prices
 * in one dated file.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { synthesizeApp } from '../test/infra/synth.ts';
import { type BenchResults, readResults } from './results.ts';

const { values } = parseArgs({
  args: process.argv.slice(3),
  options: {
    prices: { type: 'string', default: 'bench/aws-prices-2026-12.json' },
  },
});

// ------------------------------------------------------------ assumptions

/** The spec's interval: every cluster resyncs every 5 minutes. */
const INTERVAL_S = 300;
const HOURS_A_MONTH = 730;
const RESYNCS_A_MONTH = (HOURS_A_MONTH * 3600) / INTERVAL_S;
const FLEETS = [100, 1_000, 10_000];
/** The fleet's mix of cluster sizes (the generator's presets). */
const MIX = { small: 0.6, medium: 0.3, large: 0.1 } as const;
type Size = keyof typeof MIX;
const PODS: Record<Size, number> = { small: 200, medium: 2_000, large: 5_000 };
/** API reads a cluster a day (dashboards, CLI, automation): stated, not measured. */
const READS_A_CLUSTER_DAY = 200;
/** The database is sized to run at most at this share of its sustained CPU. */
const DB_CPU_HEADROOM = 0.5;
/** Stored bytes a cluster holds, times this: dead tuples, history, indexes' slack. */
const STORAGE_SLACK = 2;
/** Lambda gives a function one full vCPU at 1,769 MB, in proportion below. */
const LAMBDA_MB_PER_VCPU = 1769;
const SQS_CHUNK = 64 * 1024;
/** SQS FIFO high-throughput mode, us-east-1: transactions a second per API action. */
const SQS_FIFO_HIGH_THROUGHPUT_TPS = 70_000;
/** gp3's baseline throughput, MB/s: the ceiling of the WAL the database writes. */
const GP3_BASELINE_MBPS = 125;
/** RDS PostgreSQL's default max_connections: memory / 9,531,392 bytes, at most 5,000. */
const maxConnections = (memoryGiB: number) =>
  Math.min(5000, Math.floor((memoryGiB * 2 ** 30) / 9_531_392));

// ------------------------------------------------------------------ input

interface Price {
  usd: number;
  unit: string;
  source: string;
}
interface RdsClass {
  class: string;
  vcpu: number;
  memory_gib: number;
  usd_hour: number;
  baseline_share: number;
}
interface Prices {
  region: string;
  entered: string;
  /** The date every price was checked against its page; null: not yet. */
  checked: string | null;
  prices: Record<string, Price>;
  rds_instances: { source: string; classes: RdsClass[] };
}

const pricesPath = values.prices;
const prices = JSON.parse(readFileSync(pricesPath, 'utf8')) as Prices;
const price = (key: string): number => {
  const p = prices.prices[key];
  if (!p) throw new Error(`${pricesPath} has no price ${key}`);
  return p.usd;
};

function need(name: string): BenchResults {
  const r = readResults(name);
  if (!r) {
    throw new Error(
      `bench/results/${name}.json is missing: run its bench first (docs/slo.md names the command)`,
    );
  }
  return r;
}
const fig = (r: BenchResults | undefined, key: string) =>
  r?.figures[key]?.value;

const steady = need('ingest-steady');
const sync = readResults('sync');
const api = readResults('api');

// ------------------------------------------------ the deployment's shape

type Resource = { Type: string; Properties: Record<string, unknown> };
const app = synthesizeApp();
const resources = (
  Object.values(app.templates) as { toJSON(): unknown }[]
).flatMap((t) =>
  Object.values(
    (t.toJSON() as { Resources: Record<string, Resource> }).Resources,
  ),
);
const ofType = (type: string) => resources.filter((r) => r.Type === type);
const functions = ofType('AWS::Lambda::Function');
const syncFunction = functions.find((f) =>
  String(f.Properties.FunctionName ?? '').endsWith('-sync'),
);
const syncMapping = ofType('AWS::Lambda::EventSourceMapping')[0];
// An API function's description is its method and path.
const apiFunctions = functions.filter((f) =>
  /^GET \/api\//.test(String(f.Properties.Description ?? '')),
);
const instance = ofType('AWS::RDS::DBInstance')[0];
const targetGroup = ofType('AWS::RDS::DBProxyTargetGroup')[0];
const task = ofType('AWS::ECS::TaskDefinition')[0];
const service = ofType('AWS::ECS::Service')[0];
const queue = ofType('AWS::SQS::Queue').find(
  (q) => !String(q.Properties.QueueName ?? '').includes('dlq'),
);
if (!syncFunction || !syncMapping || !instance || !task || !queue) {
  throw new Error('the synthesized app lacks a resource the bill reads');
}
const syncMemoryMb = Number(syncFunction.Properties.MemorySize);
const syncArch = String((syncFunction.Properties.Architectures as string[])[0]);
const syncMaxConcurrency = Number(
  (syncMapping.Properties.ScalingConfig as { MaximumConcurrency: number })
    .MaximumConcurrency,
);
const apiMemoryMb = Number(
  (apiFunctions[0] ?? syncFunction).Properties.MemorySize ?? 512,
);
const dbClass = String(instance.Properties.DBInstanceClass);
const multiAz = instance.Properties.MultiAZ === true;
const allocatedGiB = Number(instance.Properties.AllocatedStorage);
const backupDays = Number(instance.Properties.BackupRetentionPeriod);
const proxyPercent = Number(
  (
    targetGroup?.Properties.ConnectionPoolConfigurationInfo as {
      MaxConnectionsPercent?: number;
    }
  )?.MaxConnectionsPercent ?? 100,
);
const bridgeVcpu = Number(task.Properties.Cpu) / 1024;
const bridgeGb = Number(task.Properties.Memory) / 1024;
const bridgeTasks = Number(service?.Properties.DesiredCount ?? 1);
const natGateways = ofType('AWS::EC2::NatGateway').length;
const queueMaxBytes = Number(queue.Properties.MaximumMessageSize);
if (syncArch !== 'arm64') {
  throw new Error(`the sync runs on ${syncArch}; the prices file has Arm's`);
}

// ------------------------------------------------------ per-resync inputs

const measured = (key: string): number => {
  const v = fig(steady, key);
  if (v === undefined) {
    throw new Error(`bench/results/ingest-steady.json has no ${key}`);
  }
  return v;
};
const medium = {
  wallMs: measured('alone_wall_p50_ms'),
  workerCpuMs: measured('alone_worker_cpu_ms'),
  // The steady window's, per record settled: it holds autovacuum and the
  // checkpoints in their steady share. The worker alone's reading (just
  // after the first syncs, when autovacuum is busiest) only when the
  // window's was not read.
  postgresCpuMs:
    (fig(steady, 'postgres_cpu_ms') ?? 0) > 0
      ? (fig(steady, 'postgres_cpu_ms') as number)
      : measured('alone_postgres_cpu_ms'),
  // One cluster's resyncs one after the other: the window's also holds the
  // first syncs' checkpoint and autovacuum (shown beside it as an upper bound).
  walBytes:
    fig(steady, 'alone_wal_bytes_per_resync') ??
    measured('wal_bytes_per_resync'),
  windowWalBytes: measured('wal_bytes_per_resync'),
  tableBytes: Math.max(0, measured('table_bytes_per_resync')),
  storedBytes: measured('database_bytes') / measured('clusters'),
  jsonBytes: measured('json_bytes'),
  wireBytes: measured('wire_bytes'),
  bridgeCpuMs: fig(steady, 'bridge_cpu_ms'),
};
if (!(medium.postgresCpuMs > 0)) {
  throw new Error(
    "ingest-steady.json's PostgreSQL CPU was not read (the server must run on the bench's machine)",
  );
}

/**
 * How a size's resync compares with a medium one: the sync bench's
 * resync times (mean of the no-change and 10%-changed steps) when it
 * measured both sizes, else the pod count.
 */
function factor(size: Size): { f: number; how: string } {
  const t = (s: Size) => {
    const same = fig(sync, `${s}.same.ms`);
    const changed = fig(sync, `${s}.changed.ms`);
    return same !== undefined && changed !== undefined
      ? (same + changed) / 2
      : undefined;
  };
  const mine = t(size);
  const base = t('medium');
  if (mine !== undefined && base !== undefined) {
    return { f: mine / base, how: 'sync bench' };
  }
  return { f: PODS[size] / PODS.medium, how: 'pod count' };
}
const jsonFactor = (size: Size) => {
  const mine = fig(sync, `${size}.json_bytes`);
  const base = fig(sync, 'medium.json_bytes');
  return mine !== undefined && base !== undefined
    ? mine / base
    : PODS[size] / PODS.medium;
};

interface PerResync {
  durationS: number;
  postgresCpuMs: number;
  walBytes: number;
  storedBytes: number;
  wireBytes: number;
  sqsRequests: number;
  claimCheck: boolean;
}

const lambdaVcpu = Math.min(1, syncMemoryMb / LAMBDA_MB_PER_VCPU);
function perResync(size: Size): PerResync {
  const { f } = factor(size);
  const wireBytes = medium.wireBytes * jsonFactor(size);
  const claimCheck = wireBytes > queueMaxBytes;
  // Lambda's share of a vCPU stretches the worker's own CPU time.
  const durationS =
    ((medium.wallMs + medium.workerCpuMs * (1 / lambdaVcpu - 1)) * f) / 1000;
  const chunks = claimCheck ? 1 : Math.ceil(wireBytes / SQS_CHUNK);
  return {
    durationS,
    postgresCpuMs: medium.postgresCpuMs * f,
    walBytes: medium.walBytes * f,
    storedBytes: medium.storedBytes * jsonFactor(size),
    wireBytes,
    // Send and receive by 64 KB chunk, one delete.
    sqsRequests: 2 * chunks + 1,
    claimCheck,
  };
}
const sizes = Object.keys(MIX) as Size[];
const per = Object.fromEntries(sizes.map((s) => [s, perResync(s)])) as Record<
  Size,
  PerResync
>;
const mixed = <K extends keyof PerResync>(key: K) =>
  sizes.reduce((sum, s) => sum + MIX[s] * Number(per[s][key]), 0);
const claimShare = sizes.reduce(
  (sum, s) => sum + (per[s].claimCheck ? MIX[s] : 0),
  0,
);

// API reads: the mean over the API bench's route families.
const apiRoutes = Object.entries(api?.figures ?? {}).filter(([k]) =>
  k.endsWith('.p50_ms'),
);
const apiDurationMs =
  apiRoutes.length > 0
    ? apiRoutes.reduce((s, [, v]) => s + v.value, 0) / apiRoutes.length
    : 30;
const apiPostgresCpuMs = (() => {
  // A reading below zero lost a backend that exited: left out.
  const cpu = Object.entries(api?.figures ?? {}).filter(
    ([k, v]) => k.endsWith('.postgres_cpu_ms') && v.value > 0,
  );
  return cpu.length > 0
    ? cpu.reduce((s, [, v]) => s + v.value, 0) / cpu.length
    : 5;
})();

// ------------------------------------------------------------------ bill

interface Line {
  item: string;
  usd: number;
  basis: string;
  source: 'measured' | 'extrapolated' | 'configured' | 'assumed';
}

const rdsClasses = prices.rds_instances.classes;
const rdsSustained = (c: RdsClass) => c.vcpu * c.baseline_share;

function bill(clusters: number) {
  const resyncs = clusters * RESYNCS_A_MONTH;
  const rate = clusters / INTERVAL_S;
  const reads = clusters * READS_A_CLUSTER_DAY * (HOURS_A_MONTH / 24);
  const readRate = reads / (HOURS_A_MONTH * 3600);
  const gbSeconds = resyncs * mixed('durationS') * (syncMemoryMb / 1024);
  const postgresCores =
    (rate * mixed('postgresCpuMs') + readRate * apiPostgresCpuMs) / 1000;
  const configured = rdsClasses.find((c) => c.class === dbClass);
  const chosen =
    rdsClasses.find(
      (c) =>
        rdsSustained(c) * DB_CPU_HEADROOM >= postgresCores &&
        rdsSustained(c) >= (configured ? rdsSustained(configured) : 0),
    ) ?? rdsClasses.at(-1);
  if (!chosen) throw new Error('no RDS classes in the prices file');
  const storedGb = (clusters * mixed('storedBytes') * STORAGE_SLACK) / 1e9;
  const storageGb = Math.max(allocatedGiB, Math.ceil(storedGb / 10) * 10);
  const walGbADay = (rate * 86_400 * mixed('walBytes')) / 1e9;
  const backupGb = Math.max(0, walGbADay * backupDays + storedGb - storageGb);
  const azs = multiAz ? 2 : 1;
  const wireGb = (resyncs * mixed('wireBytes')) / 1e9;
  const claimResyncs = resyncs * claimShare;
  const lines: Line[] = [
    {
      item: 'Sync Lambda, compute',
      usd: gbSeconds * price('lambda_arm_gb_second'),
      basis: `${fmt(resyncs)} resyncs × ${(mixed('durationS') * 1000).toFixed(0)} ms (mix mean) × ${syncMemoryMb} MB = ${fmt(gbSeconds)} GB-s`,
      source: 'extrapolated',
    },
    {
      item: 'Sync Lambda, requests',
      usd: resyncs * price('lambda_request'),
      basis: `one invocation a resync (a 5-minute trickle rarely fills a batch)`,
      source: 'assumed',
    },
    {
      item: 'SQS FIFO requests',
      usd: resyncs * mixed('sqsRequests') * price('sqs_fifo_request'),
      basis: `${mixed('sqsRequests').toFixed(1)} a resync: send and receive per 64 KB chunk, one delete`,
      source: 'extrapolated',
    },
    {
      item: 'S3 claim checks',
      usd: claimResyncs * (price('s3_put') + price('s3_get')),
      basis: `${(claimShare * 100).toFixed(0)}% of resyncs (gzip bodies over the queue's ${fmt(queueMaxBytes)} bytes): a PUT and a GET each`,
      source: 'extrapolated',
    },
    {
      item: "Bridge's Fargate task",
      usd:
        bridgeTasks *
        HOURS_A_MONTH *
        (bridgeVcpu * price('fargate_arm_vcpu_hour') +
          bridgeGb * price('fargate_arm_gb_hour')),
      basis: `${bridgeTasks} × ${bridgeVcpu} vCPU, ${bridgeGb} GB, Arm, all month`,
      source: 'configured',
    },
    {
      item: 'NAT gateway',
      usd:
        natGateways * HOURS_A_MONTH * price('nat_gateway_hour') +
        wireGb * price('nat_gateway_gb'),
      basis: `${natGateways} gateway(s) all month + ${fmt(wireGb)} GB of gzip bodies the bridge pulls from NATS`,
      source: 'extrapolated',
    },
    {
      item: `RDS ${chosen.class}${multiAz ? ' Multi-AZ' : ''}`,
      usd: chosen.usd_hour * HOURS_A_MONTH * azs,
      basis: `PostgreSQL needs ${postgresCores.toFixed(2)} cores (resyncs ${(rate * mixed('postgresCpuMs')).toFixed(0)} ms/s + reads ${(readRate * apiPostgresCpuMs).toFixed(0)} ms/s), sized at ≤ ${DB_CPU_HEADROOM * 100}% of ${rdsSustained(chosen)} sustained vCPU; configured: ${dbClass}`,
      source: 'extrapolated',
    },
    {
      item: 'RDS storage (gp3)',
      usd: storageGb * price('rds_gp3_gb_month') * azs,
      basis: `${storageGb} GB: ${fmt(storedGb)} GB stored (${fmt(mixed('storedBytes') / 1e6)} MB a cluster × ${STORAGE_SLACK} slack), at least the configured ${allocatedGiB} GiB`,
      source: 'extrapolated',
    },
    {
      item: 'RDS backup storage',
      usd: backupGb * price('rds_backup_gb_month'),
      basis: `${fmt(walGbADay)} GB of WAL a day × ${backupDays} days + a snapshot, less the free share (the provisioned size)`,
      source: 'extrapolated',
    },
    {
      item: 'RDS Proxy',
      usd:
        Math.max(2, chosen.vcpu) * HOURS_A_MONTH * price('rds_proxy_vcpu_hour'),
      basis: `${Math.max(2, chosen.vcpu)} vCPU of the instance`,
      source: 'configured',
    },
    {
      item: 'API: HTTP API requests',
      usd: reads * price('http_api_request'),
      basis: `${fmt(reads)} reads (${READS_A_CLUSTER_DAY} a cluster a day)`,
      source: 'assumed',
    },
    {
      item: 'API: Lambda',
      usd:
        reads *
        (price('lambda_request') +
          (apiDurationMs / 1000) *
            (apiMemoryMb / 1024) *
            price('lambda_arm_gb_second')),
      basis: `${apiDurationMs.toFixed(0)} ms a read (the API bench's mean p50) at ${apiMemoryMb} MB`,
      source: api ? 'extrapolated' : 'assumed',
    },
  ];
  const total = lines.reduce((s, l) => s + l.usd, 0);

  // Where this fleet meets a limit: each as a share of its ceiling.
  const syncConcurrency = rate * mixed('durationS');
  const apiConcurrency = readRate * (apiDurationMs / 1000);
  const connections = syncMaxConcurrency + Math.ceil(apiConcurrency) + 2;
  const connectionLimit = Math.floor(
    (maxConnections(chosen.memory_gib) * proxyPercent) / 100,
  );
  const sqsTps = rate * (mixed('sqsRequests') / 2);
  const walMbps = (rate * mixed('walBytes')) / 1e6;
  const bridgeShare =
    medium.bridgeCpuMs === undefined
      ? undefined
      : (rate * medium.bridgeCpuMs) / 1000 / (bridgeVcpu * bridgeTasks);
  const largest = rdsClasses.at(-1) as RdsClass;
  const limits = [
    {
      limit: `Sync concurrency (the event source's MaximumConcurrency ${syncMaxConcurrency})`,
      share: syncConcurrency / syncMaxConcurrency,
      change:
        'raise syncMaxConcurrency (each instance holds a database connection through the proxy)',
    },
    {
      limit: `Database connections through the proxy (${proxyPercent}% of ${chosen.class}'s ${maxConnections(chosen.memory_gib)})`,
      share: connections / connectionLimit,
      change: 'a larger instance class, or fewer API connections a function',
    },
    {
      limit: `SQS FIFO throughput (high-throughput mode, ${fmt(SQS_FIFO_HIGH_THROUGHPUT_TPS)} a second per action)`,
      share: sqsTps / SQS_FIFO_HIGH_THROUGHPUT_TPS,
      change:
        'shard the queue by tenant; a message group is one cluster, far below its own limit',
    },
    {
      limit: `Database write rate (WAL ${walMbps.toFixed(2)} MB/s of gp3's ${GP3_BASELINE_MBPS} MB/s baseline)`,
      share: walMbps / GP3_BASELINE_MBPS,
      change: 'provision gp3 throughput, or io2',
    },
    {
      limit: `Database CPU (${postgresCores.toFixed(2)} cores of the largest class listed, ${largest.class}: ${rdsSustained(largest)})`,
      share: postgresCores / rdsSustained(largest),
      change: 'read replicas for the API, then shard tenants over instances',
    },
    ...(bridgeShare === undefined
      ? []
      : [
          {
            limit: `Bridge CPU (${bridgeTasks} task of ${bridgeVcpu} vCPU)`,
            share: bridgeShare,
            change: 'more bridge tasks (bridgeDesiredCount) or a larger task',
          },
        ]),
  ];
  return { clusters, lines, total, limits, chosen, rate };
}

function fmt(n: number): string {
  if (n >= 100) return Math.round(n).toLocaleString('en-US');
  return n.toLocaleString('en-US', { maximumFractionDigits: 2 });
}
const usd = (n: number) =>
  `$${n.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;

// ------------------------------------------------------------------ page

const bills = FLEETS.map(bill);
const page: string[] = [
  '# What a fleet costs in AWS',
  '',
  '<!-- Generated by `npm run bench -- cost` (bench/cost.ts). Do not edit: rerun. -->',
  '',
  `The monthly bill of the backend for 100, 1,000 and 10,000 clusters, each resyncing every`,
  `${INTERVAL_S / 60} minutes (${fmt(RESYNCS_A_MONTH)} resyncs a cluster a month), in ${prices.region} at the list prices entered`,
  `on ${prices.entered} in \`${pricesPath}\` (the only hand-entered inputs; each price names its page).`,
  prices.checked
    ? `Every price was checked against its page on ${prices.checked}.`
    : '**The prices are not checked**: entered from the published list without the pages at hand, none yet compared with its page; check them before quoting a figure.',
  `The fleet's mix: ${sizes.map((s) => `${MIX[s] * 100}% ${s} (${fmt(PODS[s])} pods)`).join(', ')}.`,
  '',
  '**What is measured and what is not.** Measured on the bench machine (results files below): a',
  "medium cluster's resync through the sync handler alone (wall time, the worker's and PostgreSQL's",
  "CPU), its WAL and table growth, its gzip body, the API's read latency and PostgreSQL CPU.",
  "**Extrapolated**: small and large resyncs from the sync bench's resync times beside a medium",
  "one; the Lambda duration from the bench machine's wall time, with the worker's CPU stretched by",
  `Lambda's share of a vCPU at ${syncMemoryMb} MB (${lambdaVcpu.toFixed(2)}); everything at fleet scale, which no bench ran.`,
  `**Configured** (read from the synthesized CDK app): the sync's ${syncMemoryMb} MB on ${syncArch}, its`,
  `concurrency ${syncMaxConcurrency}, ${dbClass}${multiAz ? ' Multi-AZ' : ''} with ${allocatedGiB} GiB and ${backupDays} days of backups, the bridge's`,
  `${bridgeVcpu} vCPU / ${bridgeGb} GB task × ${bridgeTasks}, ${natGateways} NAT gateway, a ${fmt(queueMaxBytes)}-byte queue limit.`,
  `**Assumed**: ${READS_A_CLUSTER_DAY} API reads a cluster a day; one sync invocation a resync; the database`,
  `sized to run at most ${DB_CPU_HEADROOM * 100}% of its sustained CPU; stored bytes × ${STORAGE_SLACK} for dead tuples and history.`,
  "**WAL** is the bench server's, stock checkpoint settings: most of a resync's WAL is full-page",
  'images of pages first touched after a checkpoint. RDS archives WAL for point-in-time recovery and',
  'bills it as backup storage, so at fleet scale it is the line to check first against a deployed',
  "instance's TransactionLogsGeneration metric (longer checkpoint intervals shrink it). The bill",
  `uses one cluster's resyncs one after the other (${(medium.walBytes / 1024).toFixed(0)} KiB a medium resync); the steady window measured`,
  `${(medium.windowWalBytes / 1024).toFixed(0)} KiB, with the first syncs' checkpoint and autovacuum in it: an upper bound.`,
  'Not in the bill: CloudWatch logs and metrics, Secrets Manager, data transfer out, the metrics',
  'store (Amazon Managed Service for Prometheus), the NATS server, and free tiers.',
  '',
  '## Monthly cost',
  '',
  `| Line | ${bills.map((b) => `${fmt(b.clusters)} clusters`).join(' | ')} | Basis at ${fmt(FLEETS.at(-1) ?? 0)} | Kind |`,
  `|---|${bills.map(() => '---:').join('|')}|---|---|`,
];
const lineNames = bills[0]?.lines.map((l) => l.item) ?? [];
for (const [i] of lineNames.entries()) {
  const last = bills.at(-1)?.lines[i];
  const itemNames = [...new Set(bills.map((b) => b.lines[i]?.item))].join(
    ' → ',
  );
  page.push(
    `| ${itemNames} | ${bills.map((b) => usd(b.lines[i]?.usd ?? 0)).join(' | ')} | ${last?.basis ?? ''} | ${last?.source ?? ''} |`,
  );
}
page.push(
  `| **Total** | ${bills.map((b) => `**${usd(b.total)}**`).join(' | ')} | | |`,
  `| per cluster | ${bills.map((b) => usd(b.total / b.clusters)).join(' | ')} | | |`,
  '',
  '## Where each fleet meets its first limit',
  '',
  'Each limit as a share of its ceiling (100% is the limit); the first to reach it, and what to',
  'change then.',
  '',
);
for (const b of bills) {
  const sorted = [...b.limits].sort((x, y) => y.share - x.share);
  const first = sorted[0];
  page.push(
    `### ${fmt(b.clusters)} clusters (${b.rate.toFixed(1)} resyncs a second)`,
    '',
    '| Limit | Used |',
    '|---|---:|',
    ...sorted.map((l) => `| ${l.limit} | ${(l.share * 100).toFixed(1)}% |`),
    '',
    first && first.share >= 1
      ? `First limit: **${first.limit}**, passed (${(first.share * 100).toFixed(0)}%): ${first.change}.`
      : `Nearest limit: ${first?.limit} at ${((first?.share ?? 0) * 100).toFixed(0)}%; when it is reached: ${first?.change}.`,
    '',
  );
}
const inputs = (name: string, r: BenchResults | undefined) =>
  r
    ? `- \`bench/results/${name}.json\`: \`${r.command}\`, ${r.date.slice(0, 16).replace('T', ' ')} UTC, commit ${r.commit.slice(0, 7)}, load ${r.machine.loadAverage[0]}${r.machine.hostSpeedMs === undefined ? '' : `, probe ${r.machine.hostSpeedMs} ms`}`
    : `- \`bench/results/${name}.json\`: missing (assumed figures used instead)`;
page.push(
  '## Inputs',
  '',
  inputs('ingest-steady', steady),
  inputs('sync', sync),
  inputs('api', api),
  '',
  'Per resync, by size (medium measured, the others extrapolated):',
  '',
  '| Size | Factor | Lambda duration | PostgreSQL CPU | WAL | Stored a cluster | gzip body |',
  '|---|---:|---:|---:|---:|---:|---:|',
  ...sizes.map((s) => {
    const p = per[s];
    const { f, how } = factor(s);
    return `| ${s} | ${f.toFixed(2)} (${how}) | ${(p.durationS * 1000).toFixed(0)} ms | ${p.postgresCpuMs.toFixed(1)} ms | ${(p.walBytes / 1024).toFixed(0)} KiB | ${(p.storedBytes / 1e6).toFixed(1)} MB | ${(p.wireBytes / 1e6).toFixed(2)} MB${p.claimCheck ? ' (claim check)' : ''} |`;
  }),
  '',
  `Regenerate: \`npm run bench -- cost\` (after \`npm run bench -- ingest --steady\`, \`npm run bench -- sync\` and \`npm run bench -- api\`; see [slo.md](slo.md)).`,
  '',
);
const out = new URL('../docs/cost.md', import.meta.url).pathname;
writeFileSync(out, page.join('\n'));
console.log(`${out} written`);
for (const b of bills) {
  console.log(`${fmt(b.clusters)} clusters: ${usd(b.total)} a month`);
}
