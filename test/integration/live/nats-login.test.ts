/**
 * The live reads' NATS login on a server that asks every client for its
 * `.creds`, as production's does: the API's connection logs in with the
 * NATS secret's `creds` (the file's content) or the local stack's
 * NATS_CREDS (the content or a file's path, as the agent and the bridge
 * take it), and its request reaches an agent logged in the same way. On a
 * server that also requires TLS with a certificate a private authority
 * signed, the connection trusts the secret's `ca` (or NATS_CA), and only it.
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
  resolveLiveNatsTarget,
} from '../../../shared/live/nats.ts';
import {
  type NatsTarget,
  parseNatsSecret,
} from '../../../shared/nats-login.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { captureStdout } from '../sweeps/support.ts';

const AGENT_ID = 'agent-login-test';
const REPLY = { ok: true, agent_version: 'v0.9.0', result: { pong: true } };

let nats: TestNatsServer;
let agent: NatsConnection;
let dir: string;
let apiCreds: string;

beforeAll(async () => {
  nats = await startNatsServer({ creds: true });
  // The agent logs in as it does in a cluster (connectNats, NATS_CREDS).
  agent = await startAgent(nats);
  apiCreds = (await nats.userCreds('api'))!;
  dir = await mkdtemp(join(tmpdir(), 'live-creds-'));
});

afterAll(async () => {
  await agent?.drain();
  await nats?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** An agent answering on `server`, logged in as the agent does. */
async function startAgent(
  server: TestNatsServer,
  ca?: string,
): Promise<NatsConnection> {
  const connection = await connectNats({
    url: server.url,
    creds: (await server.userCreds('agent'))!,
    ...(ca ? { ca } : {}),
    name: 'test-agent',
    waitOnFirstConnect: false,
  });
  connection.subscribe(commandSubject(AGENT_ID), {
    callback: (error, msg) => {
      if (!error) msg.respond(JSON.stringify(REPLY));
    },
  });
  await connection.flush();
  return connection;
}

async function askAgent(target: NatsTarget | undefined) {
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

describe('the live reads on a NATS server that requires TLS with a private authority', () => {
  let tlsNats: TestNatsServer;
  let tlsAgent: NatsConnection;
  let secretCreds: string;
  let ca: { pem: string; file: string };

  beforeAll(async () => {
    tlsNats = await startNatsServer({ creds: true, tls: true });
    ca = tlsNats.ca!;
    // The agent in its cluster trusts the authority by NATS_CA's file.
    tlsAgent = await startAgent(tlsNats, ca.file);
    secretCreds = (await tlsNats.userCreds('api'))!;
  });

  afterAll(async () => {
    await tlsAgent?.drain();
    await tlsNats?.stop();
  });

  it('trust the NATS secret’s ca, read as the functions read the secret, and reach the agent', async () => {
    // Prepare
    const target = parseNatsSecret(
      JSON.stringify({ url: tlsNats.url, creds: secretCreds, ca: ca.pem }),
    );

    // Act
    const reply = await askAgent(target);

    // Assess
    expect(reply).toEqual(REPLY);
  });

  it('trust NATS_CA naming the authority’s file, locally', async () => {
    // Prepare
    const target = await resolveLiveNatsTarget(
      parseConfig({
        NATS_URL: tlsNats.url,
        NATS_CREDS: secretCreds,
        NATS_CA: ca.file,
      }),
    );

    // Act / Assess
    expect(await askAgent(target)).toEqual(REPLY);
  });

  it.each([
    ['without the authority: its certificate is not trusted', false],
    ['with an authority the certificate does not chain to', true],
  ])(
    'hold no connection %s: the read is 503 live_unavailable',
    async (_, otherCa) => {
      // Prepare: another run's authority, which issued no certificate here.
      const other = otherCa ? await startNatsServer({ tls: true }) : undefined;

      try {
        // Act
        const attempt = askAgent({
          url: tlsNats.url,
          creds: secretCreds,
          ...(other ? { ca: other.ca!.pem } : {}),
        });

        // Assess
        await expect(attempt).rejects.toMatchObject({
          code: 'live_unavailable',
          status: 503,
        });
      } finally {
        await other?.stop();
      }
    },
  );

  it('say why when the NATS secret cannot be read, naming its field and nothing of its value', async () => {
    // Prepare: the secret as the functions read it, its url missing.
    const secret = JSON.stringify({ creds: secretCreds, ca: ca.pem });
    const provider = new LiveNatsProvider(async () => parseNatsSecret(secret));
    const output = captureStdout();

    try {
      // Act
      const nats = await provider.get();

      // Assess
      expect(nats).toBeUndefined();
      const [line] = output
        .json()
        .filter((l) => l.message === 'live reads: no NATS connection');
      expect(line).toMatchObject({
        error: 'NatsLoginError',
        reason: 'the NATS secret has no url',
      });
      expect(JSON.stringify(output.json())).not.toContain('BEGIN');
    } finally {
      output.restore();
    }
  });

  it('refuse a server without TLS when told to trust an authority', async () => {
    // Act: the first server speaks no TLS.
    const attempt = askAgent({ url: nats.url, creds: apiCreds, ca: ca.pem });

    // Assess
    await expect(attempt).rejects.toMatchObject({ code: 'live_unavailable' });
  });
});
