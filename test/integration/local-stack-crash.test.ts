/**
 * The local stack (`npm start`) as a child process, killed and fed poison:
 * a SIGKILL of its process group after the bridge acked a snapshot and
 * before the sync committed it loses nothing, and a message that keeps
 * failing holds back only its own cluster until it is recorded and let go.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_CONSUMER, DEFAULT_STREAM } from '../../infra/local/ingest.ts';
import { DEMO_TENANT } from '../../infra/local/stack.ts';
import { query, queryMaybeOne } from '../../shared/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts';
import { freePort } from '../helpers/global-setup.ts';
import {
  localStackEnv,
  type Running,
  startLocalStackProcess,
  until,
} from '../helpers/local-stack.ts';
import { startNatsServer } from '../helpers/nats.ts';
import { installPoisonNode } from '../helpers/poison-node.ts';
import { tinyInventory } from '../helpers/tiny-inventory.ts';
import { newAgentId } from './ingest/support.ts';

// The tenant the stack creates on first start (the seeder's defaults).
const subjectOf = (agentId: string) =>
  `proxima.${DEMO_TENANT.clientSlug}.${DEMO_TENANT.envSlug}.${agentId}.kubernetes`;

const inventoryOf = (agentId: string, at: Date) =>
  tinyInventory(agentId, at, { nodes: 2 });

describe('local stack (npm start) under kills and poison', () => {
  let database: TestDatabase;
  const dataDirs: string[] = [];
  const stacks: Running[] = [];
  const connections: NatsConnection[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    for (const nc of connections.splice(0)) await nc.close().catch(() => {});
    for (const stack of stacks.splice(0)) {
      if (stack.child.exitCode === null) {
        stack.killGroup();
        await stack.exited;
      }
    }
    for (const cleanup of cleanups.splice(0)) await cleanup();
  });
  afterAll(async () => {
    await database.drop();
    for (const dir of dataDirs) await rm(dir, { recursive: true, force: true });
  });

  async function start(env: NodeJS.ProcessEnv) {
    const started = await startLocalStackProcess(env, { detached: true });
    stacks.push(started.stack);
    const nc = await connect({ servers: started.natsUrl });
    connections.push(nc);
    return { ...started, nc };
  }

  async function newEnv(extra: NodeJS.ProcessEnv = {}) {
    const dataDir = await mkdtemp(join(tmpdir(), 'local-stack-crash-'));
    dataDirs.push(dataDir);
    return {
      ...localStackEnv({
        databaseUrl: database.url,
        dataDir,
        port: await freePort(),
      }),
      ...extra,
    };
  }

  const lastSnapshotOf = async (agentId: string) =>
    (
      await queryMaybeOne<{ last_snapshot_at: Date }>(
        database.db,
        'select last_snapshot_at from clusters where agent_id = $1',
        [agentId],
      )
    )?.last_snapshot_at.toISOString();

  it('loses no snapshot the bridge acked when the stack is killed before the sync commits it', {
    timeout: 300_000,
  }, async () => {
    // Prepare: NATS of its own that outlives the kill, so the bridge's ack
    // stays acked (a nats-server killed too may not have written its
    // consumer's state yet, and would redeliver). A cluster applied once,
    // then its row locked from here, so the next snapshot's sync waits
    // after the bridge has acked it.
    const nats = await startNatsServer();
    cleanups.push(() => nats.stop());
    const env = await newEnv({ NATS_URL: nats.url });
    const first = await start(env);
    const agentId = newAgentId();
    const js = jetstream(first.nc);
    const at = Date.now();
    const one = inventoryOf(agentId, new Date(at - 120_000));
    const two = inventoryOf(agentId, new Date(at - 60_000));
    await js.publish(subjectOf(agentId), JSON.stringify(one));
    await until(
      'the first snapshot applied',
      async () => (await lastSnapshotOf(agentId)) === one.timestamp,
      60_000,
      first.stack,
    );
    const locker = new pg.Client({ connectionString: database.url });
    await locker.connect();
    try {
      await locker.query('begin');
      await locker.query(
        'select id from clusters where agent_id = $1 for update',
        [agentId],
      );

      // Act: the second snapshot acked by the bridge, then kill -9.
      const { seq } = await js.publish(subjectOf(agentId), JSON.stringify(two));
      const jsm = await jetstreamManager(first.nc);
      await until(
        'the bridge to ack the second snapshot',
        async () => {
          const info = await jsm.consumers.info(
            DEFAULT_STREAM,
            DEFAULT_CONSUMER,
          );
          return info.ack_floor.stream_seq >= seq;
        },
        60_000,
        first.stack,
      );
      expect(await lastSnapshotOf(agentId)).toBe(one.timestamp);
      await first.nc.close();
      first.stack.killGroup();
      const killed = await first.stack.exited;
      await locker.query('rollback');
      expect(killed.signal).toBe('SIGKILL');
    } finally {
      await locker.end();
    }

    // Assess: after a restart on the same data, the snapshot is applied.
    const second = await start(env);
    await until(
      'the acked snapshot applied after the restart',
      async () => (await lastSnapshotOf(agentId)) === two.timestamp,
      60_000,
      second.stack,
    );
    // Only the one not yet applied: the first was removed once applied.
    expect(second.stack.output()).toMatch(
      /"message":"local queue: messages kept on disk sent again".*"messages":1\b/,
    );
  });

  it('lets a poison message hold back only its own cluster: B applies at once, A after the poison one is recorded and let go', {
    timeout: 300_000,
  }, async () => {
    // Prepare: a fault only the poison snapshot's node meets, and a queue
    // that lets a failing message go after two receives.
    const removePoison = await installPoisonNode(database.db);
    const env = await newEnv({ QUEUE_MAX_RECEIVE_COUNT: '2' });
    const { stack, nc } = await start(env);
    const a = newAgentId();
    const b = newAgentId();
    const at = Date.now();
    const poison = inventoryOf(a, new Date(at - 180_000));
    poison.nodes![0]!.name = 'poison-node';
    const bSnapshot = inventoryOf(b, new Date(at - 120_000));
    const nextA = inventoryOf(a, new Date(at - 60_000));
    const js = jetstream(nc);
    const rejectionsOf = (agentId: string) =>
      query<{ reason: string; stage: string }>(
        database.db,
        'select reason, stage from ingest_rejections where agent_id = $1',
        [agentId],
      );

    try {
      // Act
      await js.publish(subjectOf(a), JSON.stringify(poison));
      await js.publish(subjectOf(b), JSON.stringify(bSnapshot));
      await js.publish(subjectOf(a), JSON.stringify(nextA));

      // Assess: B while A's poison snapshot is still retried.
      await until(
        'cluster B applied',
        async () => (await lastSnapshotOf(b)) === bSnapshot.timestamp,
        60_000,
        stack,
      );
      expect(await rejectionsOf(a)).toEqual([]);
      expect(await lastSnapshotOf(a)).toBeUndefined();
      const rows = await until(
        'the poison snapshot recorded',
        async () => {
          const r = await rejectionsOf(a);
          return r.length > 0 && r;
        },
        120_000,
        stack,
      );
      expect(rows).toEqual([
        {
          stage: 'sync',
          reason: expect.stringMatching(
            /^failed on each of 2 receives, moved to the dead-letter queue: .*poison node refused/,
          ),
        },
      ]);
      await until(
        'A’s next snapshot applied',
        async () => (await lastSnapshotOf(a)) === nextA.timestamp,
        120_000,
        stack,
      );
      const nodes = await query<{ name: string }>(
        database.db,
        `select n.name from k8s_nodes n join clusters c on c.id = n.cluster_id
          where c.agent_id = $1`,
        [a],
      );
      expect(nodes.map((n) => n.name)).not.toContain('poison-node');
    } finally {
      await removePoison();
    }
  });
});
