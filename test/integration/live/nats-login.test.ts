/**
 * The live reads' NATS login on a server that asks every client for its
 * `.creds`, as production's does: the API's connection logs in with the
 * NATS secret's `creds` (the file's content) or the local stack's
 * NATS_CREDS (the content or a file's path, as the agent and the bridge
 * take it), and its request reaches an agent logged in the same way.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../shared/config.ts';
import { LiveReadError } from '../../../shared/errors.ts';
import { connectNats } from '../../../shared/ingest/bridge/nats-setup.ts';
import { commandSubject } from '../../../shared/live/kube-query.ts';
import {
  kubeQuery,
  LiveNatsProvider,
  type LiveNatsTarget,
  resolveLiveNatsTarget,
} from '../../../shared/live/nats.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';

const AGENT_ID = 'agent-login-test';
const REPLY = { ok: true, agent_version: 'v0.9.0', result: { pong: true } };

let nats: TestNatsServer;
let agent: NatsConnection;
let dir: string;
let apiCreds: string;

beforeAll(async () => {
  nats = await startNatsServer({ creds: true });
  // The agent logs in as it does in a cluster (connectNats, NATS_CREDS).
  agent = await connectNats({
    url: nats.url,
    creds: (await nats.userCreds('agent'))!,
    name: 'test-agent',
    waitOnFirstConnect: false,
  });
  agent.subscribe(commandSubject(AGENT_ID), {
    callback: (error, msg) => {
      if (!error) msg.respond(JSON.stringify(REPLY));
    },
  });
  await agent.flush();
  apiCreds = (await nats.userCreds('api'))!;
  dir = await mkdtemp(join(tmpdir(), 'live-creds-'));
});

afterAll(async () => {
  await agent?.drain();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function askAgent(target: LiveNatsTarget | undefined) {
  const provider = new LiveNatsProvider(async () => target);
  try {
    const reply = await kubeQuery(
      await provider.get(),
      AGENT_ID,
      { query: 'ping' },
      5_000,
    );
    return JSON.parse(Buffer.from(reply).toString('utf8')) as unknown;
  } finally {
    await provider.close();
  }
}

describe('the live reads on a NATS server that asks for .creds', () => {
  it('log in with the NATS secret’s creds, the file’s content, and reach the agent', async () => {
    // Act
    const reply = await askAgent({ url: nats.url, creds: apiCreds });

    // Assess
    expect(reply).toEqual(REPLY);
  });

  it('log in with creds whose final newline a secret store dropped', async () => {
    // Act
    const reply = await askAgent({ url: nats.url, creds: apiCreds.trimEnd() });

    // Assess
    expect(apiCreds.trimEnd()).toMatch(/END USER NKEY SEED-+$/);
    expect(reply).toEqual(REPLY);
  });

  it('log in with NATS_CREDS naming a .creds file, as the agent and the bridge take it', async () => {
    // Prepare
    const file = join(dir, 'api.creds');
    await writeFile(file, apiCreds, { mode: 0o600 });
    const target = await resolveLiveNatsTarget(
      parseConfig({ NATS_URL: nats.url, NATS_CREDS: file }),
    );

    // Act
    const reply = await askAgent(target);

    // Assess
    expect(target).toEqual({ url: nats.url, creds: file });
    expect(reply).toEqual(REPLY);
  });

  it('without creds hold no connection: the read is 503 live_unavailable', async () => {
    // Act
    const attempt = askAgent({ url: nats.url });

    // Assess
    await expect(attempt).rejects.toThrow(LiveReadError);
    await expect(attempt).rejects.toMatchObject({
      code: 'live_unavailable',
      status: 503,
    });
  });
});
