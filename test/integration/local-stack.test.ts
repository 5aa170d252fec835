import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAgentId } from '../../scripts/seed-agent.ts';
import { query, queryMaybeOne } from '../../shared/db/pool.ts';
import {
  APPLICATION_LOGINS,
  FUNCTION_LOGINS,
  type FunctionKind,
} from '../../shared/db/roles.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/global-setup.ts';
import {
  localStackEnv,
  type Running,
  run,
  startLocalStackProcess,
  until,
} from '../helpers/local-stack.ts';
import { startNatsServer } from '../helpers/nats.ts';

describe('local stack (npm start)', () => {
  let database: TestDatabase;
  let dataDir: string;
  let stack: Running | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    dataDir = await mkdtemp(join(tmpdir(), 'local-stack-'));
  });
  afterAll(async () => {
    if (stack && stack.child.exitCode === null) {
      stack.killGroup();
      stack.child.kill('SIGKILL');
    }
    await database.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('comes up healthy, stores a seeded cluster, serves a live read, and stops cleanly on Ctrl-C', {
    timeout: 300_000,
  }, async () => {
    // Prepare
    const port = await freePort();
    // Its own nats-server and in-process SQS/S3; only the database is given.
    const env = localStackEnv({ databaseUrl: database.url, dataDir, port });

    // Act: start, in a process group of its own, as a terminal starts it
    const {
      stack: started,
      natsUrl,
      health,
    } = await startLocalStackProcess(env, { detached: true });
    stack = started;

    // Act: seed (no kubectl context: the built-in fixture)
    const seed = run(['scripts/seed.ts'], {
      ...env,
      NATS_URL: natsUrl,
      KUBECONFIG: join(dataDir, 'no-kubeconfig'),
    });
    const seeded = await seed.exited;
    const agentId = seedAgentId('internal', 'development', 'test-cluster');
    const cluster = await until(
      'the seeded cluster',
      () =>
        queryMaybeOne<{ id: string; name: string; node_count: number }>(
          database.db,
          'select id, name, node_count from clusters where agent_id = $1',
          [agentId],
        ),
      60_000,
      started,
    );
    // The API reads on its own pool, the ingest on another (an idle
    // connection stays open for 30 s; both were used just now), each as
    // the login its function has in AWS.
    const pools = await query<{
      application_name: string;
      usename: string;
      n: number;
    }>(
      database.db,
      `select application_name, usename, count(*)::int as n
         from pg_stat_activity
       where datname = current_database()
         and application_name like 'k8s-inventory-local%'
       group by application_name, usename order by application_name`,
    );

    // Act: a live read, which opens the API's own NATS connection; the
    // seed's agent does not listen for them.
    const granted = await run(
      [
        'scripts/grant.ts',
        '--email',
        'alice@example.com',
        '--role',
        'operator',
        '--client',
        'internal',
      ],
      env,
    ).exited;
    const token = run(
      ['scripts/token.ts', '--email', 'alice@example.com'],
      env,
    );
    await token.exited;
    // Act: the README's tour, as a newcomer runs it (its live read opens
    // the API's own NATS connection; the seed's agent does not listen).
    const tour = await runReadmeTour(port, cluster.id, token.output().trim());

    // Act: stop as Ctrl-C does, the signal to every process of the group
    // (nats-server and VictoriaMetrics stop at once, the stack in its order)
    started.killGroup('SIGINT');
    const exit = await Promise.race([
      started.exited,
      new Promise<never>((_, reject) =>
        setTimeout(() => reject(new Error('no exit within 60 s')), 60_000),
      ),
    ]);

    // Assess
    expect(health).toBe(200);
    expect(seeded.code, seed.output()).toBe(0);
    expect(cluster.name).toBe('test-cluster');
    expect(cluster.node_count).toBeGreaterThan(0);
    const names = pools.map((p) => p.application_name);
    expect(names).toContain('k8s-inventory-local-api');
    expect(names).toContain('k8s-inventory-local-sync');
    for (const pool of pools) {
      const fn = pool.application_name.replace('k8s-inventory-local-', '');
      expect(pool.usename, fn).toBe(
        APPLICATION_LOGINS[FUNCTION_LOGINS[fn as FunctionKind]].username,
      );
      expect(pool.n).toBeLessThanOrEqual(4);
    }
    expect(granted.code).toBe(0);
    expect(tour.map((step) => step.ask)).toEqual(
      TOUR_EXPECTATIONS.map((step) => step.ask),
    );
    for (const step of tour) {
      expect(step.answered, `${step.ask}: ${step.path}`).toBe(true);
    }
    expect(exit.code, started.output()).toBe(0);
    expect(started.output()).toContain('[local] stopped');
    expect(started.output()).not.toContain('did not stop cleanly');
    // Each line names the function that wrote it: the sync's lines the
    // sync, the bridge's (no Lambda function locally, nor any invocation)
    // none, though sweeps and syncs ran beside it in the one process.
    const lines = jsonLines(started.output());
    const synced = lines.filter((l) => l.message === 'inventory synced');
    expect(synced.length).toBeGreaterThan(0);
    for (const line of synced) {
      expect(line.function_name).toBe('k8s-inventory-sync');
    }
    const forwarded = lines.filter((l) => l.message === 'inventory forwarded');
    expect(forwarded.length).toBeGreaterThan(0);
    for (const line of forwarded) {
      expect(line).not.toHaveProperty('function_name');
      expect(line).not.toHaveProperty('function_request_id');
    }
  });

  it('logs in to a NATS server of the user’s with NATS_CREDS and NATS_CA, its bridge and the seed alike', {
    timeout: 300_000,
  }, async () => {
    // Prepare: a server that asks for .creds and requires TLS, its
    // certificate signed by an authority only NATS_CA names.
    const nats = await startNatsServer({ creds: true, tls: true });
    const otherDir = await mkdtemp(join(tmpdir(), 'local-stack-nats-'));
    try {
      const credsFile = join(otherDir, 'user.creds');
      await writeFile(credsFile, (await nats.userCreds('local'))!, {
        mode: 0o600,
      });
      const env = {
        ...localStackEnv({
          databaseUrl: database.url,
          dataDir: otherDir,
          port: await freePort(),
        }),
        NATS_URL: nats.url,
        NATS_CREDS: credsFile,
        NATS_CA: nats.ca!.file,
      };

      // Act
      const { stack: started, natsUrl } = await startLocalStackProcess(env);
      stack = started;
      const seed = run(
        ['scripts/seed.ts', 'internal', 'development', 'tls-cluster'],
        {
          ...env,
          KUBECONFIG: join(otherDir, 'no-kubeconfig'),
        },
      );
      const seeded = await seed.exited;
      const cluster = await until(
        'the seeded cluster',
        () =>
          queryMaybeOne<{ name: string }>(
            database.db,
            'select name from clusters where agent_id = $1',
            [seedAgentId('internal', 'development', 'tls-cluster')],
          ),
        60_000,
        started,
      );
      started.child.kill('SIGINT');
      const exit = await started.exited;

      // Assess
      expect(natsUrl).toBe(nats.url);
      expect(seeded.code, seed.output()).toBe(0);
      expect(cluster.name).toBe('tls-cluster');
      expect(exit.code, started.output()).toBe(0);
    } finally {
      await nats.stop();
      await rm(otherDir, { recursive: true, force: true });
    }
  });
});

/** The JSON log lines in a process's output. */
function jsonLines(output: string): Record<string, unknown>[] {
  return output.split('\n').flatMap((line) => {
    const start = line.indexOf('{');
    if (start < 0) return [];
    try {
      return [JSON.parse(line.slice(start)) as Record<string, unknown>];
    } catch {
      return [];
    }
  });
}

interface Answer {
  data?: unknown;
  error?: { code: string };
}

function hasItems(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0;
}

function field(answer: Answer, name: string): unknown {
  return (answer.data as Record<string, unknown> | undefined)?.[name];
}

/**
 * What each row of the README's tour answers on a stack just seeded with
 * `npm run seed`, asked by an operator, in the README's order. `waits`: asked
 * again until it holds (a range query's points fall on whole minutes, so
 * the sync's series is in range within a minute).
 */
const TOUR_EXPECTATIONS: {
  ask: string;
  answers(status: number, answer: Answer): boolean;
  waits?: true;
}[] = [
  {
    ask: 'which clusters can I see?',
    answers: (status, answer) => status === 200 && hasItems(answer.data),
  },
  {
    ask: 'how is this cluster?',
    answers: (status, answer) =>
      status === 200 && (field(answer, 'nodes') as { total: number }).total > 0,
  },
  {
    ask: 'what runs here?',
    answers: (status, answer) => status === 200 && hasItems(answer.data),
  },
  {
    ask: 'what does it ask for?',
    answers: (status, answer) => status === 200 && hasItems(answer.data),
  },
  {
    ask: 'what happened?',
    answers: (status, answer) =>
      status === 200 && hasItems(field(answer, 'events')),
  },
  {
    ask: 'what changed before the incident?',
    answers: (status, answer) =>
      status === 200 && hasItems(field(answer, 'items')),
  },
  {
    ask: 'how busy is it?',
    answers: (status, answer) =>
      status === 200 && hasItems(field(answer, 'series')),
    waits: true,
  },
  {
    ask: 'what is it connected to?',
    answers: (status, answer) =>
      status === 200 && hasItems(field(answer, 'edges')),
  },
  {
    // No host is registered (`npm run host`): an empty page.
    ask: 'which hosts run which clusters?',
    answers: (status, answer) => status === 200 && Array.isArray(answer.data),
  },
  {
    // The seed publishes as an agent that answers no live read.
    ask: 'show me the live object',
    answers: (status, answer) =>
      status === 502 && answer.error?.code === 'agent_unreachable',
  },
  {
    // The audit trail is the admins'.
    ask: 'who read what live?',
    answers: (status, answer) =>
      status === 403 && answer.error?.code === 'forbidden',
  },
];

/**
 * Runs the README's "A short tour" against the stack on `port`: each row's
 * `api` request, `$C` the cluster and `$HOUR` what the README's own line
 * sets it to (run by sh, as a newcomer's shell runs it).
 */
async function runReadmeTour(
  port: number,
  clusterId: string,
  token: string,
): Promise<{ ask: string; path: string; answered: boolean }[]> {
  const readme = await readFile(
    new URL('../../README.md', import.meta.url),
    'utf8',
  );
  const start = readme.indexOf('## A short tour');
  const tour = readme.slice(start, readme.indexOf('\n## ', start));
  const hourLine = /^HOUR=.*$/m.exec(tour)?.[0];
  if (hourLine === undefined) throw new Error('the tour sets no HOUR');
  const hour = () =>
    execFileSync('sh', ['-c', `${hourLine}\nprintf %s "$HOUR"`], {
      encoding: 'utf8',
      env: {
        ...process.env,
        PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH}`,
      },
    });
  const steps = [];
  for (const [, ask = '', request = ''] of tour.matchAll(
    /^\| (.+?) +\| `api "?([^`"]+)"?` +\|/gm,
  )) {
    const expected = TOUR_EXPECTATIONS.find((step) => step.ask === ask);
    const deadline = Date.now() + 90_000;
    let path: string;
    let answered: boolean;
    for (;;) {
      path = request
        .replaceAll('$C', clusterId)
        .replaceAll('$HOUR', request.includes('$HOUR') ? hour() : '');
      const response = await fetch(`http://127.0.0.1:${port}/api/v1/${path}`, {
        headers: { authorization: `Bearer ${token}` },
      });
      const answer = (await response.json()) as Answer;
      answered = expected?.answers(response.status, answer) ?? false;
      if (answered || !expected?.waits || Date.now() > deadline) break;
      await sleep(1_000);
    }
    steps.push({ ask, path, answered });
  }
  return steps;
}
