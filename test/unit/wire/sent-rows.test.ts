/**
 * A row's key members read from its bytes (SentRows.strings) must be what
 * JSON.parse reads: a resync keys its rows this way without parsing them.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanArray } from '../../../shared/wire/message-scan.ts';
import { SentRows } from '../../../shared/wire/sent-rows.ts';

const NAMES = ['namespace', 'name'];

/** A row with its key members among others, strings or not. */
const row = fc
  .record({
    namespace: fc.oneof(fc.string({ unit: 'binary' }), fc.jsonValue()),
    name: fc.string({ unit: 'binary' }),
    other: fc.dictionary(fc.string(), fc.jsonValue()),
  })
  .map(({ namespace, name, other }) => ({ ...other, namespace, name }));

/** JSON.stringify's text, with every string's letters \u-escaped or not. */
function spelled(value: unknown, escapeLetters: boolean): string {
  const json = JSON.stringify(value);
  if (!escapeLetters) return json;
  return json.replace(/"(?:[^"\\]|\\.)*"/g, (s) =>
    s.replace(
      /(\\u[0-9a-f]{4}|\\.)|[a-z]/g,
      (c, escaped) =>
        escaped ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
    ),
  );
}

function sentRows(text: string): SentRows {
  const bytes = Buffer.from(text);
  const spans = scanArray(bytes);
  if (spans === undefined) throw new Error(`unscannable: ${text}`);
  return new SentRows(bytes, spans);
}

describe('SentRows.strings', () => {
  it('reads the key members as JSON.parse reads them, escaped or not', () => {
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 4 }),
        fc.boolean(),
        (rows, escapeLetters) => {
          // Prepare
          const text = `[${rows.map((r) => spelled(r, escapeLetters)).join(',')}]`;
          const parsed = JSON.parse(text) as Record<string, unknown>[];

          // Act
          const sent = sentRows(text);
          const read = rows.map((_, i) => sent.strings(i, NAMES));

          // Assess
          for (const [i, r] of parsed.entries()) {
            const strings = NAMES.every((n) => typeof r[n] === 'string');
            expect(read[i]).toEqual(
              strings ? NAMES.map((n) => r[n]) : undefined,
            );
          }
        },
      ),
    );
  });

  it('refuses a key string with a raw control character as JSON.parse does', () => {
    // Prepare
    const text = '[{"namespace":"a\u0001b","name":"x"}]';

    // Act
    const read = () => sentRows(text).strings(0, NAMES);

    // Assess
    expect(() => JSON.parse(text)).toThrow(SyntaxError);
    expect(read).toThrow(SyntaxError);
  });
});

describe('SentRows.members', () => {
  it('reads members, any JSON value or absent, as JSON.parse reads them', () => {
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 4 }),
        fc.boolean(),
        (rows, escapeLetters) => {
          // Prepare
          const text = `[${rows.map((r) => spelled(r, escapeLetters)).join(',')}]`;
          const parsed = JSON.parse(text) as Record<string, unknown>[];
          const names = [...NAMES, 'other', 'absent'];

          // Act
          const sent = sentRows(text);
          const read = rows.map((_, i) => sent.members(i, names));

          // Assess
          for (const [i, r] of parsed.entries()) {
            expect(read[i]).toEqual(names.map((n) => r[n]));
          }
        },
      ),
    );
  });

  it('reads a member given twice by its last occurrence, as JSON.parse does', () => {
    // Prepare
    const text = '[{"last_seen":"a","x":{"last_seen":"b"},"last_seen":null}]';

    // Act
    const read = sentRows(text).members(0, ['last_seen', 'x']);

    // Assess
    expect(read).toEqual([null, { last_seen: 'b' }]);
  });
});
