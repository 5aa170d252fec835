import { gzipSync } from 'node:zlib';
import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { connect } from '@nats-io/transport-node';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../shared/config.ts';
import { armFault, InjectedFault } from '../../../shared/faults.ts';
import {
  BridgeConnectionLostError,
  BridgeSetupError,
  type RejectInfo,
} from '../../../shared/ingest/bridge/index.ts';
import { connectNats } from '../../../shared/ingest/bridge/nats-setup.ts';
import { createBridgeFromConfig } from '../../../shared/ingest/bridge-config.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import {
  createS3Client,
  createSqsClient,
  startOutageSwitch,
} from '../../helpers/sqs.ts';
import { captureStdout } from '../sweeps/support.ts';
import {
  eventually,
  inventoryBody,
  inventorySubject,
  queuedSeq,
  type Stack,
  startStack,
  TEST_TIMEOUT_MS,
} from './support.ts';

let stack: Stack | undefined;
const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await stack?.stop();
  stack = undefined;
});

async function stackOf(options: Parameters<typeof startStack>[0] = {}) {
  stack = await startStack(options);
  return stack;
}

describe('Bridge', { timeout: TEST_TIMEOUT_MS }, () => {
  it.each([
    ['on a server without authentication', false],
    // The agent's login as the .creds content, the bridge's as a file's
    // path (NATS_CREDS takes either).
    [
      'on a server that asks every client for its .creds, as production does',
      true,
    ],
  ])(
    'forwards a published inventory to the FIFO queue, decoded byte for byte, %s',
    async (_, creds) => {
      // Prepare
      const s = await stackOf({ creds });
      const bridge = await s.startBridge();
      const subject = inventorySubject();
      const body = inventoryBody(20_000);

      // Act
      const seq = await s.publish(subject, body);
      await eventually('the forward', () => bridge.stats().forwarded === 1);
      const queued = await s.drain();

      // Assess
      expect(queued).toHaveLength(1);
      const decoded = await s.decode(queued[0]!);
      expect(decoded.subject).toBe(subject);
      expect(decoded.streamSeq).toBe(seq);
      expect(decoded.json.equals(body)).toBe(true);
      expect(queued[0]!.Body).toBe(body.toString('utf8'));
      expect(queued[0]!.Attributes?.MessageGroupId).toBe(
        subject.split('.').slice(1, 4).join('.'),
      );
    },
  );

  it('forwards over TLS from a server a private authority signed, configured as ECS configures it: the NATS secret whole in NATS_SECRET', async () => {
    // Prepare: the task's environment (infra/constructs/bridge-service.ts)
    // holds the secret's JSON, its `.creds` and its authority inline.
    const s = await stackOf({ creds: true, tls: true });
    const bridge = createBridgeFromConfig(
      parseConfig({
        NATS_SECRET: JSON.stringify({
          url: s.nats.url,
          creds: await s.nats.userCreds('ecs-bridge'),
          ca: s.nats.ca!.pem,
        }),
        NATS_CREATE_STREAM: 'true',
        QUEUE_URL: s.sqs.queueUrl,
        CLAIM_BUCKET: s.sqs.bucket,
        BRIDGE_HEALTH_PORT: '0',
      }),
      { sqs: s.sqs.sqs, s3: s.sqs.s3, onReject: async () => {} },
    );
    s.bridges.push(bridge);
    await bridge.start();
    const subject = inventorySubject();

    // Act
    const seq = await s.publish(subject, inventoryBody(2_000));
    await eventually('the forward', () => bridge.stats().forwarded === 1);

    // Assess
    const queued = await s.drain();
    expect(queued.map(queuedSeq)).toEqual([seq]);
    // Without the authority the same server is not trusted.
    await expect(
      connectNats({
        url: s.nats.url,
        creds: (await s.nats.userCreds('no-ca'))!,
        waitOnFirstConnect: false,
      }),
    ).rejects.toThrow(
      /unable to (verify the first certificate|get local issuer certificate)/i,
    );
  });

  it('is refused by that server without its .creds, and says so; takes them without their final newline', async () => {
    // Prepare
    const s = await stackOf({ creds: true });

    // Act
    const attempt = connect({ servers: s.nats.url, name: 'no-creds' });

    // Assess
    await expect(attempt).rejects.toThrow(/authorization violation/i);
    // The same login's content, its final newline dropped, is accepted.
    const trimmed = await connectNats({
      url: s.nats.url,
      creds: (await s.nats.userCreds('trimmed'))!.trimEnd(),
      waitOnFirstConnect: false,
    });
    await trimmed.close();
    await expect(
      connectNats({
        url: s.nats.url,
        creds: '/nonexistent/bridge.creds',
        waitOnFirstConnect: false,
      }),
    ).rejects.toThrow(
      "the NATS credentials are neither a .creds file's content nor a file that can be read (ENOENT)",
    );
  });

  it.each([1024 * 1024, 256 * 1024])(
    'sends a 3 MB inventory by claim check when the queue limit is %i bytes',
    async (limit) => {
      // Prepare
      const s = await stackOf({ maxMessageBytes: limit });
      const bridge = await s.startBridge();
      const subject = inventorySubject();
      const body = inventoryBody(3 * 1024 * 1024);

      // Act
      await s.publish(subject, body);
      await eventually('the forward', () => bridge.stats().forwarded === 1);
      const queued = await s.drain();

      // Assess
      expect(bridge.stats().claimChecked).toBe(1);
      expect(queued).toHaveLength(1);
      const pointer =
        queued[0]!.MessageAttributes?.[QueueAttribute.claimCheck]?.StringValue;
      expect(pointer).toMatch(/^s3:\/\//);
      const decoded = await s.decode(queued[0]!);
      expect(decoded.json.length).toBe(body.length);
      expect(decoded.json.equals(body)).toBe(true);
    },
  );

  it('passes a gzip body through and decodes it to the JSON', async () => {
    // Prepare
    const s = await stackOf();
    const bridge = await s.startBridge();
    const json = inventoryBody(200_000);
    const gzipped = gzipSync(json);

    // Act
    await s.publish(inventorySubject(), gzipped, 'gzip');
    await eventually('the forward', () => bridge.stats().forwarded === 1);
    const queued = await s.drain();

    // Assess
    expect(queued).toHaveLength(1);
    const attributes = queued[0]!.MessageAttributes ?? {};
    expect(attributes[QueueAttribute.contentEncoding]?.StringValue).toBe(
      'gzip',
    );
    expect(attributes[QueueAttribute.bodyEncoding]?.StringValue).toBe('base64');
    const decoded = await s.decode(queued[0]!);
    expect(decoded.json.equals(json)).toBe(true);
  });

  it('terminates a message with a bad subject, reports it once and forwards the rest', async () => {
    // Prepare
    const s = await stackOf();
    const rejections: RejectInfo[] = [];
    const bridge = await s.startBridge({
      onReject: async (info) => {
        rejections.push(info);
      },
    });
    const bad = 'proxima.ACME.prod.not-a-uuid.kubernetes';
    const good = inventorySubject();

    // Act
    const badBody = inventoryBody(1_000);
    const badSeq = await s.publish(bad, badBody);
    await s.publish(good, inventoryBody(1_000));
    await eventually('the good forward', () => bridge.stats().forwarded === 1);
    const settled = await eventually('the consumer settled', async () => {
      const info = await s.consumerInfo();
      return info.num_ack_pending === 0 && info.num_pending === 0 && info;
    });
    const queued = await s.drain();

    // Assess
    expect(rejections).toEqual([
      {
        subject: bad,
        streamSeq: badSeq,
        reason: expect.stringMatching(/DNS-1123/),
        sizeBytes: badBody.byteLength,
      },
    ]);
    expect(bridge.stats().rejected).toBe(1);
    expect(settled.num_redelivered).toBe(0);
    expect(settled.ack_floor.stream_seq).toBeGreaterThanOrEqual(badSeq + 1);
    expect(
      queued.map(
        (m) => m.MessageAttributes?.[QueueAttribute.subject]?.StringValue,
      ),
    ).toEqual([good]);
  });

  it('naks while the queue is unreachable and delivers everything once it is back', async () => {
    // Prepare
    const s = await stackOf();
    const outage = await startOutageSwitch(s.sqs.endpoint);
    cleanups.push(() => outage.stop());
    const bridge = await s.startBridge({
      sqs: createSqsClient(outage.endpoint),
      s3: createS3Client(outage.endpoint),
    });
    const agents = [inventorySubject(), inventorySubject()];
    await outage.cut();

    // Act
    const published: { subject: string; seq: number }[] = [];
    for (let i = 0; i < 6; i++) {
      const subject = agents[i % 2]!;
      const body = inventoryBody(i === 5 ? 1_500_000 : 2_000, `n${i}`);
      published.push({ subject, seq: await s.publish(subject, body) });
    }
    await eventually('failed sends', () => bridge.stats().sendFailures >= 2);
    expect(bridge.stats().forwarded).toBe(0);
    await outage.restore();
    await eventually('all forwards', () => bridge.stats().forwarded === 6);
    const queued = await s.drain();

    // Assess
    const seqs = queued.map(queuedSeq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(
      published.map((p) => p.seq),
    );
    for (const agent of agents) {
      const ofAgent = queued
        .filter(
          (m) =>
            m.MessageAttributes?.[QueueAttribute.subject]?.StringValue ===
            agent,
        )
        .map(queuedSeq);
      expect(ofAgent).toEqual([...ofAgent].sort((a, b) => a - b));
    }
    for (const message of queued) {
      const decoded = await s.decode(message);
      expect(JSON.parse(decoded.json.toString('utf8')).type).toBe('kubernetes');
    }
  });

  it('records a message it could not send by its last delivery as rejected', async () => {
    // Prepare
    const s = await stackOf();
    const outage = await startOutageSwitch(s.sqs.endpoint);
    cleanups.push(() => outage.stop());
    const rejections: RejectInfo[] = [];
    const bridge = await s.startBridge({
      sqs: createSqsClient(outage.endpoint),
      s3: createS3Client(outage.endpoint),
      maxDeliver: 2,
      onReject: async (info) => {
        rejections.push(info);
      },
    });
    await outage.cut();
    const subject = inventorySubject();

    // Act
    const body = inventoryBody(1_000);
    const seq = await s.publish(subject, body);
    await eventually('the rejection', () => rejections.length === 1);
    const info = await eventually('the consumer settled', async () => {
      const current = await s.consumerInfo();
      return current.num_ack_pending === 0 && current;
    });

    // Assess
    expect(rejections[0]).toEqual({
      subject,
      streamSeq: seq,
      reason: expect.stringMatching(/^not forwarded after 2 deliveries: /),
      sizeBytes: body.byteLength,
    });
    expect(bridge.stats()).toMatchObject({
      rejected: 1,
      sendFailures: 2,
      forwarded: 0,
    });
    expect(info.ack_floor.stream_seq).toBe(seq);
  });

  it('terminates a message by its last delivery even when its rejection cannot be recorded, and logs why', async () => {
    // Prepare: a message too big for the queue even as a claim check, and
    // a rejection store that is down.
    const s = await stackOf();
    const bridge = await s.startBridge({
      maxDeliver: 2,
      maxBytes: 200,
      onReject: async () => {
        throw new Error('database unreachable');
      },
    });
    const out = captureStdout();
    cleanups.push(async () => out.restore());

    // Act
    const seq = await s.publish(inventorySubject(), inventoryBody(1_000));
    const info = await eventually('the consumer settled', async () => {
      const current = await s.consumerInfo();
      return current.ack_floor.stream_seq === seq && current;
    });
    out.restore();

    // Assess
    expect(info.num_ack_pending).toBe(0);
    expect(bridge.stats()).toMatchObject({ rejected: 1, forwarded: 0 });
    const logged = out.json();
    // The first delivery is retried, the last one settles it.
    expect(
      logged.filter(
        (l) =>
          l.message === 'inventory not forwarded; will retry' &&
          l.streamSeq === seq,
      ),
    ).toHaveLength(1);
    expect(
      logged.find(
        (l) =>
          l.message ===
          'rejection not recorded by the last delivery; terminated',
      ),
    ).toMatchObject({
      level: 'ERROR',
      streamSeq: seq,
      reason: expect.stringMatching(/^could not be encoded: RangeError: /),
    });
  });

  it('queues a message once when the bridge dies between the send and the ack', async () => {
    // Prepare
    const s = await stackOf();
    const doomed = await connect({
      servers: s.nats.url,
      name: 'doomed-bridge',
    });
    let sends = 0;
    const disarm = armFault('bridge.after-send', async () => {
      sends++;
      // The process dies here: its connection goes, no ack is written.
      await doomed.close();
      throw new InjectedFault('bridge.after-send', 'killed after send');
    });
    cleanups.push(async () => disarm());
    const first = await s.startBridge({ nats: doomed, ackWaitMs: 1_000 });
    const subject = inventorySubject();

    // Act
    const seq = await s.publish(subject, inventoryBody(5_000));
    await eventually('the first send', () => sends === 1);
    await expect(first.closed()).rejects.toBeInstanceOf(
      BridgeConnectionLostError,
    );
    await first.stop();
    disarm();
    const second = await s.startBridge();
    await eventually(
      'the redelivered forward',
      () => second.stats().forwarded === 1,
    );
    const queued = await s.drain();

    // Assess
    expect(first.stats().forwarded).toBe(0);
    const info = await s.consumerInfo();
    // Redelivered at least once (more on a starved machine); queued once.
    expect(info.delivered.consumer_seq).toBeGreaterThanOrEqual(2);
    expect(queued.map(queuedSeq)).toEqual([seq]);
  });

  it('keeps two messages of one agent, published back to back, in order', async () => {
    // Prepare
    const s = await stackOf();
    const bridge = await s.startBridge();
    const subject = inventorySubject();

    // Act
    const firstSeq = await s.publish(subject, inventoryBody(2_000, 'first'));
    const secondSeq = await s.publish(subject, inventoryBody(2_000, 'second'));
    await eventually('both forwards', () => bridge.stats().forwarded === 2);
    const queued = await s.drain();

    // Assess
    expect(queued.map(queuedSeq)).toEqual([firstSeq, secondSeq]);
    const tags = await Promise.all(
      queued.map(
        async (m) => JSON.parse((await s.decode(m)).json.toString('utf8')).tag,
      ),
    );
    expect(tags).toEqual(['first', 'second']);
  });

  it('answers /healthz with 200 while connected and 503 once NATS is gone', async () => {
    // Prepare
    const s = await stackOf();
    const bridge = await s.startBridge({ healthPort: 0 });
    const url = `http://127.0.0.1:${bridge.healthAddress()!.port}/healthz`;

    // Act
    const before = await fetch(url);
    await s.nats.stop();
    const after = await eventually('a 503', async () => {
      const response = await fetch(url);
      return response.status === 503 && response;
    });

    // Assess
    expect(before.status).toBe(200);
    expect(after.status).toBe(503);
    expect(bridge.stats().connected).toBe(false);
  });

  it('refuses to start when the consumer is missing and creation is off', async () => {
    // Prepare
    const s = await stackOf();

    // Act
    const starting = s.startBridge({ createStream: false });

    // Assess
    await expect(starting).rejects.toBeInstanceOf(BridgeSetupError);
  });

  it('reports consumer lag from the consumer info', async () => {
    // Prepare
    const s = await stackOf();
    const bridge = await s.startBridge({ statsIntervalMs: 100 });
    await bridge.stop();
    for (let i = 0; i < 3; i++) {
      await s.publish(inventorySubject(), inventoryBody(500));
    }
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    cleanups.push(async () => release());
    // Hold the one message it may take, so the lag stays put.
    const disarm = armFault('bridge.after-send', () => gate);
    cleanups.push(async () => disarm());

    // Act
    const lagging = await s.startBridge({
      statsIntervalMs: 100,
      maxInFlight: 1,
    });

    // Assess
    const lag = await eventually(
      'a lag of 2',
      () => lagging.stats().consumerLag === 2,
    );
    expect(lag).toBe(true);
  });

  it('writes a claim check at a key derived from the stream sequence and subject', async () => {
    // Prepare
    const s = await stackOf({ maxMessageBytes: 256 * 1024 });
    const bridge = await s.startBridge();
    const subject = inventorySubject();

    // Act
    const seq = await s.publish(subject, inventoryBody(400_000));
    await eventually('the forward', () => bridge.stats().forwarded === 1);
    const [queued] = await s.drain();

    // Assess
    const pointer =
      queued!.MessageAttributes?.[QueueAttribute.claimCheck]?.StringValue ?? '';
    const key = pointer.replace(`s3://${s.sqs.bucket}/`, '');
    expect(key).toMatch(
      new RegExp(
        `^inventory/EVENTS-[0-9a-z]+/${subject.replaceAll('.', '\\.')}/${seq}$`,
      ),
    );
    const head = await s.sqs.s3.send(
      new HeadObjectCommand({ Bucket: s.sqs.bucket, Key: key }),
    );
    expect(head.ContentLength).toBeGreaterThanOrEqual(400_000);
  });
});
