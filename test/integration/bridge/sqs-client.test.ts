/**
 * The backend's SQS client (shared/ingest/aws-clients.ts): its request
 * serializer is not the SDK's default, so what it sends is checked against
 * the emulator byte for byte, and against a stub for the request itself.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import {
  QueueDoesNotExist,
  SendMessageBatchCommand,
  type SendMessageBatchRequestEntry,
  SendMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterEach, describe, expect, it } from 'vitest';
import { sqsClient } from '../../../shared/ingest/aws-clients.ts';
import { drainQueue, startSqs, TEST_REGION } from '../../helpers/sqs.ts';
import { TEST_TIMEOUT_MS } from './support.ts';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };

/** Bodies of every kind of character SQS accepts, and an inventory's size. */
const BODIES = [
  '{"a":"plain ascii"}',
  'tab\there, lf\nthere, cr\rthere',
  'quotes " and \\ backslashes \\" and a solidus /',
  'line separators \u2028 and \u2029 (escaped by some encoders only)',
  'non-ASCII: é ü ß 中文 русский',
  'edges \ud7ff \ue000 \ufffd and <xml> & entities',
  randomBytes(320_000).toString('base64'),
];

interface Captured {
  headers: Record<string, string>;
  body: unknown;
}

/** A client whose requests are kept and answered with `response`. */
function stubbedClient(response: unknown, captured: Captured[]) {
  return sqsClient({
    region: TEST_REGION,
    endpoint: 'http://127.0.0.1:9',
    credentials,
    requestHandler: {
      async handle(request: Captured) {
        captured.push({ headers: request.headers, body: request.body });
        return {
          response: {
            statusCode: 200,
            headers: { 'content-type': 'application/x-amz-json-1.0' },
            body: Readable.from([Buffer.from(JSON.stringify(response))]),
          },
        };
      },
    },
  });
}

describe('the SQS client', { timeout: TEST_TIMEOUT_MS }, () => {
  it('queues each body and attribute as given', async () => {
    const sqs = await startSqs();
    cleanups.push(() => sqs.stop());
    const entries: SendMessageBatchRequestEntry[] = BODIES.map((body, i) => ({
      Id: `m${i}`,
      MessageBody: body,
      MessageGroupId: `group-${i}`,
      MessageDeduplicationId: `dedup-${i}`,
      MessageAttributes: {
        'nats-subject': {
          DataType: 'String',
          StringValue: `proxima.acme.prod.${i}.kubernetes ü "q"`,
        },
        'nats-stream-seq': { DataType: 'Number', StringValue: String(i + 1) },
      },
    }));
    // SendMessageBatch takes 1 MiB in all: the large body goes on its own.
    const small = entries.slice(0, -1);
    const result = await sqs.sqs.send(
      new SendMessageBatchCommand({ QueueUrl: sqs.queueUrl, Entries: small }),
    );
    expect(result.Failed ?? []).toEqual([]);
    const { Id: _, ...large } = entries.at(-1)!;
    await sqs.sqs.send(
      new SendMessageCommand({ QueueUrl: sqs.queueUrl, ...large }),
    );

    const received = await drainQueue(sqs.sqs, sqs.queueUrl);
    const byBody = new Map(received.map((m) => [m.Body, m]));
    expect(received).toHaveLength(entries.length);
    for (const entry of entries) {
      const message = byBody.get(entry.MessageBody);
      expect(message, entry.Id).toBeDefined();
      expect(message!.MessageAttributes).toEqual(entry.MessageAttributes);
    }
  });

  it('sends the request as UTF-8 JSON bytes whose length is the one declared', async () => {
    const captured: Captured[] = [];
    const client = stubbedClient(
      { Successful: [{ Id: 'm0', MessageId: 'id-0' }], Failed: [] },
      captured,
    );
    cleanups.push(async () => client.destroy());
    const entry = {
      Id: 'm0',
      MessageBody: BODIES[4]!,
      MessageGroupId: 'g',
      MessageDeduplicationId: 'd',
    };
    await client.send(
      new SendMessageBatchCommand({
        QueueUrl: 'http://127.0.0.1:9/000000000000/q.fifo',
        Entries: [entry],
      }),
    );
    const [request] = captured;
    expect(request!.body).toBeInstanceOf(Uint8Array);
    const bytes = request!.body as Uint8Array;
    expect(Number(request!.headers['content-length'])).toBe(bytes.byteLength);
    expect(request!.headers['x-amz-target']).toBe('AmazonSQS.SendMessageBatch');
    expect(JSON.parse(Buffer.from(bytes).toString('utf8'))).toEqual({
      QueueUrl: 'http://127.0.0.1:9/000000000000/q.fifo',
      Entries: [entry],
    });
  });

  it('does not hash sent bodies again: SigV4 signs their SHA-256', async () => {
    // The SDK's MD5 comparison is off on purpose (aws-clients.ts): a digest
    // that does not match what was sent does not fail the send.
    const client = stubbedClient(
      {
        Successful: [
          { Id: 'm0', MessageId: 'id-0', MD5OfMessageBody: '0'.repeat(32) },
        ],
        Failed: [],
      },
      [],
    );
    cleanups.push(async () => client.destroy());
    const result = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: 'http://127.0.0.1:9/000000000000/q.fifo',
        Entries: [{ Id: 'm0', MessageBody: 'x', MessageGroupId: 'g' }],
      }),
    );
    expect(result.Successful?.[0]?.MessageId).toBe('id-0');
  });

  it('reads service errors as their modelled exceptions', async () => {
    const sqs = await startSqs();
    cleanups.push(() => sqs.stop());
    const missing = sqs.queueUrl.replace(/[^/]+$/, 'no-such-queue.fifo');
    await expect(
      sqs.sqs.send(
        new SendMessageCommand({
          QueueUrl: missing,
          MessageBody: 'x',
          MessageGroupId: 'g',
          MessageDeduplicationId: 'd',
        }),
      ),
    ).rejects.toBeInstanceOf(QueueDoesNotExist);
  });
});
