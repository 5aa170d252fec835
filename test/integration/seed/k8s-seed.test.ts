/**
 * `./scripts/k8s-seed.sh` as the spec's CLI Seeder shows it, run as a user
 * runs it against a real nats-server: no arguments publish for internal /
 * development / test-cluster, three positional arguments name the client,
 * environment and cluster, and NATS_URL picks the server.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedAgentId } from '../../../scripts/seed-agent.ts';
import { STREAM_SUBJECTS } from '../../../shared/ingest/bridge/nats-setup.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { runProcess } from '../../helpers/run-process.ts';

const SCRIPT = new URL('../../../scripts/k8s-seed.sh', import.meta.url)
  .pathname;
const STREAM = 'EVENTS';

describe('./scripts/k8s-seed.sh', () => {
  let nats: TestNatsServer;
  let nc: NatsConnection;
  let dir: string;

  beforeAll(async () => {
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: STREAM, subjects: STREAM_SUBJECTS });
    dir = await mkdtemp(join(tmpdir(), 'k8s-seed-'));
  });
  afterAll(async () => {
    await nc?.close();
    await nats?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** The script as a shell runs it: no kube-context, so the built-in data. */
  const seed = (args: string[], env: Record<string, string>) =>
    runProcess(SCRIPT, args, {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: dir,
        KUBECONFIG: join(dir, 'no-kubeconfig'),
        DATA_DIR: dir,
        ...env,
      },
    });

  /** The newest message on the stream: its subject and inventory. */
  async function lastMessage() {
    const js = jetstream(nc);
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(STREAM);
    const name = `check-${info.state.last_seq}`;
    await jsm.consumers.add(STREAM, {
      name,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.Last,
    });
    const consumer = await js.consumers.get(STREAM, name);
    const message = await consumer.next({ expires: 5_000 });
    await jsm.consumers.delete(STREAM, name);
    if (!message) throw new Error('no message on the stream');
    const inventory = message.json<{
      agent_id: string;
      cluster: { name: string };
    }>();
    return { subject: message.subject, inventory, seq: message.seq };
  }

  it('publishes for internal / development / test-cluster given no arguments, on the server NATS_URL names', async () => {
    // Act
    const run = await seed([], { NATS_URL: nats.url });
    const published = await lastMessage();

    // Assess
    const agentId = seedAgentId('internal', 'development', 'test-cluster');
    expect(run.code, run.output).toBe(0);
    expect(published.subject).toBe(
      `proxima.internal.development.${agentId}.kubernetes`,
    );
    expect(published.inventory.agent_id).toBe(agentId);
    expect(published.inventory.cluster.name).toBe('test-cluster');
  });

  it('publishes for the client, environment and cluster given as its three arguments', async () => {
    // Act
    const run = await seed(['acme', 'production', 'k8s-prod'], {
      NATS_URL: nats.url,
    });
    const published = await lastMessage();

    // Assess
    const agentId = seedAgentId('acme', 'production', 'k8s-prod');
    expect(run.code, run.output).toBe(0);
    expect(published.subject).toBe(
      `proxima.acme.production.${agentId}.kubernetes`,
    );
    expect(published.inventory.cluster.name).toBe('k8s-prod');
  });

  it("gzips an inventory over the server's max_payload, as the agent sends it, and says so when even that does not fit", async () => {
    // Prepare: NATS's default is 1 MB; the built-in cluster is ~36 KB, ~5 KB
    // gzipped.
    const small = await startNatsServer({ maxPayload: '16KB' });
    const tiny = await startNatsServer({ maxPayload: '2KB' });
    const smallNc = await connect({ servers: small.url });
    try {
      for (const server of [smallNc, await connect({ servers: tiny.url })]) {
        await (await jetstreamManager(server)).streams.add({
          name: STREAM,
          subjects: STREAM_SUBJECTS,
        });
        if (server !== smallNc) await server.close();
      }

      // Act
      const fits = await seed([], { NATS_URL: small.url });
      const tooLarge = await seed([], { NATS_URL: tiny.url });

      // Assess
      expect(fits.code, fits.output).toBe(0);
      expect(fits.output).toMatch(/over the server's max_payload of 16384/);
      const jsm = await jetstreamManager(smallNc);
      const stored = await jsm.streams.getMessage(STREAM, { seq: 1 });
      expect(stored?.header.get('Content-Encoding')).toBe('gzip');
      const inventory = JSON.parse(gunzipSync(stored!.data).toString()) as {
        cluster: { name: string };
      };
      expect(inventory.cluster.name).toBe('test-cluster');
      expect(tooLarge.code).toBe(1);
      expect(tooLarge.output).toMatch(
        /the inventory is \d+ bytes gzipped, over nats:\/\/\S+'s max_payload of 2048/,
      );
    } finally {
      await smallNc.close();
      await small.stop();
      await tiny.stop();
    }
  });

  it('fails naming the server when NATS_URL reaches none, and refuses a fourth argument', async () => {
    // Prepare
    const before = await lastMessage();

    // Act
    const [unreachable, tooMany] = await Promise.all([
      seed([], { NATS_URL: 'nats://127.0.0.1:1' }),
      seed(['a', 'b', 'c', 'd'], { NATS_URL: nats.url }),
    ]);

    // Assess
    expect(unreachable.code).toBe(1);
    expect(unreachable.output).toContain('nats://127.0.0.1:1');
    expect(tooMany.code).toBe(2);
    expect(tooMany.output).toContain('usage:');
    expect((await lastMessage()).seq).toBe(before.seq);
  });
});
