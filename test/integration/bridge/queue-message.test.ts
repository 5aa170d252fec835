import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterEach, describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import {
  ClaimCheckUnavailableError,
  decodeQueuedInventory,
  encodeForQueue,
  toQueuedRecord,
} from '../../../shared/ingest/queue-message.ts';
import {
  createS3Client,
  startOutageSwitch,
  startSqs,
  TEST_REGION,
  type TestSqs,
} from '../../helpers/sqs.ts';
import { inventoryBody, inventorySubject, TEST_TIMEOUT_MS } from './support.ts';

const cleanups: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function sqsOf(): Promise<TestSqs> {
  const sqs = await startSqs();
  cleanups.push(() => sqs.stop());
  return sqs;
}

/** A claim-checked record for a body, with the object written or not. */
async function claimChecked(
  sqs: TestSqs,
  body: Buffer,
  options: { write: boolean; gzip?: boolean },
) {
  const encoded = encodeForQueue({
    subject: inventorySubject(),
    streamSeq: 7,
    body,
    contentEncoding: options.gzip ? 'gzip' : undefined,
    maxBytes: 256 * 1024,
    bucket: sqs.bucket,
    scope: 'EVENTS-test',
  });
  if (encoded.kind !== 'claim-check') throw new Error('expected a claim check');
  if (options.write) {
    await sqs.s3.send(
      new PutObjectCommand({
        Bucket: encoded.claim.bucket,
        Key: encoded.claim.key,
        Body: encoded.claim.body,
      }),
    );
  }
  return toQueuedRecord({
    Body: encoded.message.body,
    MessageAttributes: encoded.message.attributes,
  });
}

/** An S3 endpoint that answers every request 503 SlowDown. */
function slowDownS3(): Promise<S3Client> {
  return fakeS3((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/xml' });
    res.end(
      '<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>',
    );
  });
}

/** An S3 client of an endpoint that answers with `listener`. */
async function fakeS3(
  listener: Parameters<typeof createServer>[1],
): Promise<S3Client> {
  const server: Server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () => new Promise<void>((resolve) => server.close(() => resolve())),
  );
  const { port } = server.address() as AddressInfo;
  return new S3Client({
    endpoint: `http://127.0.0.1:${port}`,
    region: TEST_REGION,
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
    forcePathStyle: true,
    maxAttempts: 1,
  });
}

describe('decodeQueuedInventory with S3', { timeout: TEST_TIMEOUT_MS }, () => {
  it('resolves a gzip claim check from S3 and inflates it', async () => {
    // Prepare
    const sqs = await sqsOf();
    const json = inventoryBody(3 * 1024 * 1024);
    const record = await claimChecked(sqs, gzipSync(json, { level: 0 }), {
      write: true,
      gzip: true,
    });

    // Act
    const decoded = await decodeQueuedInventory(record, sqs.s3);

    // Assess
    expect(decoded.streamSeq).toBe(7);
    expect(decoded.json.equals(json)).toBe(true);
  });

  it('resolves a claim check of several gzip members and inflates it as one body', async () => {
    // Prepare: the body compressed in three parts, concatenated.
    const sqs = await sqsOf();
    const json = inventoryBody(3 * 1024 * 1024);
    const cuts = [0, 1000, 2 * 1024 * 1024, json.byteLength];
    const body = Buffer.concat(
      cuts
        .slice(1)
        .map((end, i) => gzipSync(json.subarray(cuts[i], end), { level: 1 })),
    );
    const record = await claimChecked(sqs, body, { write: true, gzip: true });

    // Act
    const decoded = await decodeQueuedInventory(record, sqs.s3);

    // Assess
    expect(decoded.json.equals(json)).toBe(true);
  });

  it('refuses a claim check whose object is missing', async () => {
    // Prepare
    const sqs = await sqsOf();
    const record = await claimChecked(sqs, inventoryBody(300_000), {
      write: false,
    });

    // Act
    const decoding = decodeQueuedInventory(record, sqs.s3);

    // Assess
    await expect(decoding).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(decoding).rejects.toThrow(/is missing/);
  });

  it('throws a retryable error when S3 is unreachable', async () => {
    // Prepare
    const sqs = await sqsOf();
    const record = await claimChecked(sqs, inventoryBody(300_000), {
      write: true,
    });
    const outage = await startOutageSwitch(sqs.endpoint);
    cleanups.push(() => outage.stop());
    await outage.cut();
    const s3 = createS3Client(outage.endpoint);

    // Act
    const decoding = decodeQueuedInventory(record, s3);

    // Assess
    await expect(decoding).rejects.toBeInstanceOf(ClaimCheckUnavailableError);
    await expect(decoding).rejects.not.toBeInstanceOf(RejectedInventoryError);
  });

  it('throws a retryable error when S3 answers 503 SlowDown', async () => {
    // Prepare
    const sqs = await sqsOf();
    const record = await claimChecked(sqs, inventoryBody(300_000), {
      write: true,
    });
    const s3 = await slowDownS3();

    // Act
    const decoding = decodeQueuedInventory(record, s3);

    // Assess
    await expect(decoding).rejects.toBeInstanceOf(ClaimCheckUnavailableError);
    await expect(decoding).rejects.toThrow(/could not be read/);
  });

  it('refuses a claim check whose stated size is over the cap', async () => {
    // Prepare
    const sqs = await sqsOf();
    const record = await claimChecked(sqs, inventoryBody(300_000), {
      write: true,
    });

    // Act
    const decoding = decodeQueuedInventory(record, sqs.s3, {
      maxInflatedBytes: 100_000,
    });

    // Assess
    await expect(decoding).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(decoding).rejects.toThrow(/larger than 100000 bytes/);
  });

  it('refuses a claim check that streams past the cap with no stated size, and closes it', async () => {
    // Prepare: an object without a length that never ends.
    const sqs = await sqsOf();
    const record = await claimChecked(sqs, inventoryBody(300_000), {
      write: false,
    });
    let sent = 0;
    let closed = false;
    const s3 = await fakeS3((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const more = () => {
        if (closed) return;
        sent += chunk.byteLength;
        if (res.write(chunk)) setImmediate(more);
        else res.once('drain', more);
      };
      res.once('close', () => {
        closed = true;
      });
      more();
    });

    // Act
    const error = await decodeQueuedInventory(record, s3, {
      maxInflatedBytes: 1024 * 1024,
    }).catch((e: unknown) => e);

    // Assess
    expect(error).toBeInstanceOf(RejectedInventoryError);
    expect((error as Error).message).toMatch(/larger than 1048576 bytes/);
    await expect.poll(() => closed, { timeout: 5_000 }).toBe(true);
    expect(sent).toBeLessThan(64 * 1024 * 1024);
  });
});
