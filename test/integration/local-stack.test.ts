import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
    const live = await fetch(
      `http://127.0.0.1:${port}/api/v1/clusters/${cluster.id}/live/manifest?kind=Deployment&namespace=default&name=web`,
      { headers: { authorization: `Bearer ${token.output().trim()}` } },
    );
    const liveBody = (await live.json()) as { error?: { code: string } };

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
    expect(live.status).toBe(502);
    expect(liveBody.error?.code).toBe('agent_unreachable');
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
