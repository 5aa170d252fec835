import { gzipSync } from 'node:zlib';
import { S3Client } from '@aws-sdk/client-s3';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import {
  claimKey,
  decodeCanonicalBase64,
  decodeQueuedInventory,
  deduplicationId,
  type EncodeForQueueInput,
  encodeForQueue,
  MAX_INFLATED_BYTES,
  messageSize,
  QueueAttribute,
  type QueuedRecord,
  toQueuedRecord,
} from '../../../shared/ingest/queue-message.ts';

const SUBJECT =
  'proxima.acme.prod.6f1c2d3e-4b5a-4c6d-8e7f-901234567890.kubernetes';
const KiB = 1024;
const MiB = 1024 * KiB;

// Never called: these records need no claim check.
const s3 = new S3Client({
  region: 'us-east-1',
  credentials: { accessKeyId: 'unit', secretAccessKey: 'unit' },
});

function input(
  body: Uint8Array,
  overrides: Partial<EncodeForQueueInput> = {},
): EncodeForQueueInput {
  return {
    subject: SUBJECT,
    streamSeq: 42,
    body,
    contentEncoding: undefined,
    maxBytes: MiB,
    bucket: 'claims',
    ...overrides,
  };
}

/** What subject and sequence attributes cost, counted by hand. */
function baseOverhead(seq = 42): number {
  return (
    'nats-subject'.length +
    'String'.length +
    SUBJECT.length +
    'nats-stream-seq'.length +
    'Number'.length +
    String(seq).length
  );
}

/** The record Lambda would deliver for an encoded message. */
function asRecord(body: string, attributes: Record<string, string>) {
  const messageAttributes: QueuedRecord['messageAttributes'] = {};
  for (const [name, value] of Object.entries(attributes)) {
    messageAttributes[name] = { dataType: 'String', stringValue: value };
  }
  return { body, messageAttributes };
}

function encodedRecord(encoded: ReturnType<typeof encodeForQueue>) {
  return toQueuedRecord({
    Body: encoded.message.body,
    MessageAttributes: encoded.message.attributes,
  });
}

async function rejection(record: QueuedRecord): Promise<string> {
  try {
    await decodeQueuedInventory(record, s3);
  } catch (error) {
    expect(error).toBeInstanceOf(RejectedInventoryError);
    return (error as RejectedInventoryError).reason;
  }
  throw new Error('expected a rejection');
}

describe('encodeForQueue', () => {
  it('sends a UTF-8 JSON body inline as text, its size being body plus attribute bytes', () => {
    // Prepare
    const json = Buffer.from('{"type":"kubernetes","cluster":{"name":"é"}}');

    // Act
    const encoded = encodeForQueue(input(json));

    // Assess
    expect(encoded.kind).toBe('inline');
    expect(encoded.message.body).toBe(json.toString('utf8'));
    expect(encoded.message.size).toBe(json.byteLength + baseOverhead());
    expect(Object.keys(encoded.message.attributes).sort()).toEqual([
      QueueAttribute.streamSeq,
      QueueAttribute.subject,
    ]);
  });

  it('keeps a body that fills the limit exactly inline and claim-checks one byte more', () => {
    // Prepare
    const room = 256 * KiB - baseOverhead();
    const fits = Buffer.alloc(room, 'a');
    const over = Buffer.alloc(room + 1, 'a');

    // Act
    const exact = encodeForQueue(input(fits, { maxBytes: 256 * KiB }));
    const past = encodeForQueue(input(over, { maxBytes: 256 * KiB }));

    // Assess
    expect(exact.kind).toBe('inline');
    expect(exact.message.size).toBe(256 * KiB);
    expect(past.kind).toBe('claim-check');
    expect(past.message.size).toBeLessThanOrEqual(256 * KiB);
  });

  it('counts base64 growth when a gzip body decides between inline and claim check', () => {
    // Prepare: 700 KiB raw fits 1 MiB, but its base64 (about 933 KiB) does
    // not fit 900 KiB.
    const gzip = Buffer.alloc(700 * KiB, 7);
    const gzipOverhead =
      baseOverhead() +
      'content-encoding'.length +
      'String'.length +
      'gzip'.length +
      'body-encoding'.length +
      'String'.length +
      'base64'.length;

    // Act
    const inline = encodeForQueue(input(gzip, { contentEncoding: 'gzip' }));
    const claimed = encodeForQueue(
      input(gzip, { contentEncoding: 'gzip', maxBytes: 900 * KiB }),
    );

    // Assess
    expect(inline.kind).toBe('inline');
    expect(inline.message.size).toBe(
      Math.ceil((700 * KiB) / 3) * 4 + gzipOverhead,
    );
    expect(
      inline.message.attributes[QueueAttribute.bodyEncoding]?.StringValue,
    ).toBe('base64');
    expect(claimed.kind).toBe('claim-check');
    expect(
      claimed.message.attributes[QueueAttribute.contentEncoding]?.StringValue,
    ).toBe('gzip');
  });

  it('claim-checks a 3 MB body under both a 1 MiB and a 256 KiB limit with a small pointer', () => {
    // Prepare
    const body = Buffer.alloc(3 * MiB, '{');

    // Act
    const big = encodeForQueue(input(body, { maxBytes: MiB }));
    const small = encodeForQueue(input(body, { maxBytes: 256 * KiB }));

    // Assess
    for (const encoded of [big, small]) {
      expect(encoded.kind).toBe('claim-check');
      if (encoded.kind !== 'claim-check') continue;
      expect(encoded.claim.body.byteLength).toBe(3 * MiB);
      expect(encoded.claim.key).toBe(claimKey(SUBJECT, 42));
      expect(encoded.message.size).toBeLessThan(1 * KiB);
      expect(encoded.message.size).toBe(
        messageSize(encoded.message.body, encoded.message.attributes),
      );
      expect(
        encoded.message.attributes[QueueAttribute.claimCheck]?.StringValue,
      ).toBe(`s3://claims/inventory/${SUBJECT}/42`);
    }
  });

  it.each([
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0xfe, 0x7d])],
    ['a control character', Buffer.from('{"a":"\u0001"}')],
    ['U+FFFE', Buffer.from('{"a":"\uFFFE"}')],
    ['a character past U+FFFF', Buffer.from('{"a":"😀"}')],
  ])('sends an identity body with %s as base64', async (_what, body) => {
    // Prepare
    const encoded = encodeForQueue(input(body));

    // Act
    const decoded = await decodeQueuedInventory(encodedRecord(encoded), s3);

    // Assess
    expect(
      encoded.message.attributes[QueueAttribute.bodyEncoding]?.StringValue,
    ).toBe('base64');
    expect(decoded.json.equals(body)).toBe(true);
  });

  it.each([
    ['ASCII text', Buffer.from('{"type":"kubernetes"}'), undefined],
    [
      'multi-byte text',
      Buffer.from('{"a":"é中\uD7FF\uE000\uFFFD"}'),
      undefined,
    ],
    ['text with a byte order mark', Buffer.from('\uFEFF{"a":1}'), undefined],
    [
      'invalid UTF-8 (base64)',
      Buffer.from([0x7b, 0xc3, 0x28, 0x7d]),
      undefined,
    ],
    ['gzip', gzipSync('{"a":"é"}'), 'gzip' as const],
  ])(
    'states the size SQS counts for %s without counting the body again',
    (_what, body, contentEncoding) => {
      // Act
      const encoded = encodeForQueue(input(body, { contentEncoding }));

      // Assess
      expect(encoded.kind).toBe('inline');
      expect(encoded.message.size).toBe(
        messageSize(encoded.message.body, encoded.message.attributes),
      );
    },
  );

  it('keeps a leading byte order mark through the text form', async () => {
    // Prepare
    const body = Buffer.from('\uFEFF{"type":"kubernetes"}');

    // Act
    const encoded = encodeForQueue(input(body));
    const decoded = await decodeQueuedInventory(encodedRecord(encoded), s3);

    // Assess
    expect(
      encoded.message.attributes[QueueAttribute.bodyEncoding],
    ).toBeUndefined();
    expect(decoded.json.equals(body)).toBe(true);
  });

  it('derives the claim key and dedup id from scope, subject and sequence alone', () => {
    // Prepare
    const body = Buffer.alloc(2 * MiB, 'x');

    // Act
    const first = encodeForQueue(input(body, { scope: 'EVENTS-abc' }));
    const again = encodeForQueue(input(body, { scope: 'EVENTS-abc' }));
    const next = encodeForQueue(
      input(body, { scope: 'EVENTS-abc', streamSeq: 43 }),
    );

    // Assess
    const key = (e: typeof first) =>
      e.kind === 'claim-check' ? e.claim.key : '';
    expect(key(first)).toBe(`inventory/EVENTS-abc/${SUBJECT}/42`);
    expect(key(again)).toBe(key(first));
    expect(key(next)).not.toBe(key(first));
    expect(deduplicationId('EVENTS-abc', 42)).toBe('EVENTS-abc:42');
    expect(deduplicationId('x'.repeat(300), 42)).toHaveLength(128);
    expect(deduplicationId('name with spaces', 1)).toBe('name_with_spaces:1');
  });
});

describe('decodeQueuedInventory', () => {
  it('reads back a text, a base64 and a gzip message to the same JSON', async () => {
    // Prepare
    const json = Buffer.from('{"type":"kubernetes","pods":[]}');
    const forms = [
      encodeForQueue(input(json)),
      encodeForQueue(input(Buffer.from([0xff, 0x00]))),
      encodeForQueue(input(gzipSync(json), { contentEncoding: 'gzip' })),
    ];

    // Act
    const decoded = await Promise.all(
      forms.map((f) => decodeQueuedInventory(encodedRecord(f), s3)),
    );

    // Assess
    expect(decoded.map((d) => d.subject)).toEqual([SUBJECT, SUBJECT, SUBJECT]);
    expect(decoded.map((d) => d.streamSeq)).toEqual([42, 42, 42]);
    expect(decoded[0]!.json.equals(json)).toBe(true);
    expect(decoded[1]!.json.equals(Buffer.from([0xff, 0x00]))).toBe(true);
    expect(decoded[2]!.json.equals(json)).toBe(true);
  });

  it.each<[string, QueuedRecord, RegExp]>([
    [
      'no subject',
      asRecord('{}', { 'nats-stream-seq': '1' }),
      /no nats-subject attribute/,
    ],
    [
      'no stream sequence',
      asRecord('{}', { 'nats-subject': SUBJECT }),
      /no valid nats-stream-seq/,
    ],
    [
      'a stream sequence that is not a number',
      asRecord('{}', { 'nats-subject': SUBJECT, 'nats-stream-seq': '4x' }),
      /no valid nats-stream-seq/,
    ],
    [
      'bad base64',
      asRecord('not base64!', {
        'nats-subject': SUBJECT,
        'nats-stream-seq': '1',
        'body-encoding': 'base64',
      }),
      /not valid base64/,
    ],
    ...['QQ', 'QUJD\n', 'QU JD', 'QR==', 'QUJD===', '-_8A'].map(
      (text) =>
        [
          `base64 with an unpadded, spaced, non-canonical or foreign form (${JSON.stringify(text)})`,
          asRecord(text, {
            'nats-subject': SUBJECT,
            'nats-stream-seq': '1',
            'body-encoding': 'base64',
          }),
          /not valid base64/,
        ] as [string, QueuedRecord, RegExp],
    ),
    [
      'corrupt gzip',
      asRecord(Buffer.from('not gzip at all').toString('base64'), {
        'nats-subject': SUBJECT,
        'nats-stream-seq': '1',
        'body-encoding': 'base64',
        'content-encoding': 'gzip',
      }),
      /corrupt gzip body/,
    ],
    [
      'an unknown content encoding',
      asRecord('{}', {
        'nats-subject': SUBJECT,
        'nats-stream-seq': '1',
        'content-encoding': 'br',
      }),
      /unsupported content-encoding "br"/,
    ],
    [
      'an unknown body encoding',
      asRecord('{}', {
        'nats-subject': SUBJECT,
        'nats-stream-seq': '1',
        'body-encoding': 'hex',
      }),
      /unsupported body-encoding "hex"/,
    ],
    [
      'a malformed claim check',
      asRecord('{}', {
        'nats-subject': SUBJECT,
        'nats-stream-seq': '1',
        'claim-check': 'https://bucket/key',
      }),
      /malformed claim check/,
    ],
  ])('refuses a record with %s, naming it', async (_what, record, reason) => {
    // Prepare: the record above.

    // Act
    const refused = await rejection(record);

    // Assess
    expect(refused).toMatch(reason);
  });

  it('reads a gzip body of several members, concatenated as gzip allows, as one body', async () => {
    // Prepare: an agent may compress its body in parts (RFC 1952, 2.2);
    // an empty member adds nothing.
    const json = Buffer.from(
      '{"type":"kubernetes","timestamp":"2026-01-01T00:00:00.000Z","pods":[]}',
    );
    const body = Buffer.concat([
      gzipSync(json.subarray(0, 20)),
      gzipSync(Buffer.alloc(0)),
      gzipSync(json.subarray(20, 60), { level: 1 }),
      gzipSync(json.subarray(60)),
    ]);
    const encoded = encodeForQueue(input(body, { contentEncoding: 'gzip' }));

    // Act
    const decoded = await decodeQueuedInventory(encodedRecord(encoded), s3);

    // Assess
    expect(decoded.json.toString()).toBe(json.toString());
  });

  it('reads a gzip body whose trailer states less than it inflates to, in several chunks', async () => {
    // Prepare: the trailer states the last member's size only (5 bytes);
    // the first inflates to more than one chunk the inflate is sized by.
    const head = Buffer.from(`{"pad":"${'0123456789abcdef'.repeat(20 * KiB)}"`);
    const tail = Buffer.from(',"a":1}');
    const body = Buffer.concat([gzipSync(head), gzipSync(tail)]);
    const encoded = encodeForQueue(input(body, { contentEncoding: 'gzip' }));

    // Act
    const decoded = await decodeQueuedInventory(encodedRecord(encoded), s3);

    // Assess
    expect(body.readUInt32LE(body.length - 4)).toBe(tail.length);
    expect(decoded.json.equals(Buffer.concat([head, tail]))).toBe(true);
  });

  it('caps the inflated size over all members of a gzip body, not each', async () => {
    // Prepare: four members of 40 KiB each, every one under a 64 KiB cap.
    const member = gzipSync(Buffer.alloc(40 * KiB, 0x20));
    const body = Buffer.concat([member, member, member, member]);
    const encoded = encodeForQueue(input(body, { contentEncoding: 'gzip' }));
    const options = { maxInflatedBytes: 64 * KiB };

    // Act
    const refused = await decodeQueuedInventory(
      encodedRecord(encoded),
      s3,
      options,
    ).catch((error: unknown) => error);
    const one = await decodeQueuedInventory(
      encodedRecord(encodeForQueue(input(member, { contentEncoding: 'gzip' }))),
      s3,
      options,
    );

    // Assess
    expect(one.json.byteLength).toBe(40 * KiB);
    expect(refused).toBeInstanceOf(RejectedInventoryError);
    expect((refused as RejectedInventoryError).reason).toMatch(
      /inflates past 65536 bytes/,
    );
  });

  it.each([
    ['bytes that are not a member', Buffer.from('{"x":1}')],
    ['a member cut short', gzipSync(Buffer.from('"tail"}')).subarray(0, 12)],
  ])(
    'refuses a gzip body whose first member is followed by %s',
    async (_what, after) => {
      // Prepare
      const body = Buffer.concat([gzipSync(Buffer.from('{"a":')), after]);
      const encoded = encodeForQueue(input(body, { contentEncoding: 'gzip' }));

      // Act
      const refused = await rejection(encodedRecord(encoded));

      // Assess
      expect(refused).toMatch(/corrupt gzip body/);
    },
  );

  it('refuses a gzip body that inflates past the cap', async () => {
    // Prepare: 1 MiB of zeros gzips to about 1 KiB.
    const bomb = gzipSync(Buffer.alloc(MiB));
    const encoded = encodeForQueue(input(bomb, { contentEncoding: 'gzip' }));

    // Act
    const refused = await decodeQueuedInventory(encodedRecord(encoded), s3, {
      maxInflatedBytes: 64 * KiB,
    }).catch((error: unknown) => error);

    // Assess
    expect(encoded.message.size).toBeLessThan(4 * KiB);
    expect(refused).toBeInstanceOf(RejectedInventoryError);
    expect((refused as RejectedInventoryError).reason).toMatch(
      /inflates past 65536 bytes/,
    );
    expect(MAX_INFLATED_BYTES).toBe(64 * MiB);
  });
});

describe('decodeCanonicalBase64', () => {
  /** The definition: the text is what its decoded bytes encode to. */
  const roundTrips = (text: string) =>
    Buffer.from(text, 'base64').toString('base64') === text;

  it('decodes what bytes encode to, to those bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        expect(
          decodeCanonicalBase64(Buffer.from(bytes).toString('base64')),
        ).toEqual(Buffer.from(bytes));
      }),
    );
  });

  it('agrees with the round trip on any text of base64 and stray characters', () => {
    // Besides digits and padding: base64url's digits, whitespace, a byte
    // past ASCII, NUL, a lone surrogate, and characters past U+00FF whose
    // low byte is a digit ("Ł" is 0x141, "Ī" 0x12b), which Buffer's decoder
    // reads as "A" and "+".
    const char = fc.constantFrom(
      ...'AQgw/+9zZ=-_ \n\u00e9\u0000\ud800\u0141\u012b'.split(''),
    );
    fc.assert(
      fc.property(fc.array(char, { maxLength: 12 }), (chars) => {
        const text = chars.join('');
        const bytes = decodeCanonicalBase64(text);
        expect(bytes !== undefined).toBe(roundTrips(text));
        if (bytes !== undefined) {
          expect(bytes).toEqual(Buffer.from(text, 'base64'));
        }
      }),
      { numRuns: 20_000 },
    );
  });

  it('refuses every character outside the alphabet in each place of a quantum', () => {
    const disagreements: string[] = [];
    for (let code = 0; code <= 0xffff; code++) {
      const c = String.fromCharCode(code);
      for (const text of [`QUJ${c}`, `${c}UJD`, `QU${c}=`, `Q${c}==`]) {
        if ((decodeCanonicalBase64(text) !== undefined) !== roundTrips(text)) {
          disagreements.push(text);
        }
      }
    }
    expect(disagreements).toEqual([]);
  });
});
