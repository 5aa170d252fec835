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

  it('cuts out members’ values, any JSON value, leaving the row’s other bytes and where they were, read the same after', () => {
    fc.assert(
      fc.property(
        fc.array(row, { maxLength: 5 }),
        fc.boolean(),
        (rows, escapeLetters) => {
          // Prepare
          const text = spelled(rows, escapeLetters);
          const names = ['namespace', 'other'];

          // Act
          const sent = sentRows(text);
          const cut = rows.map((_, i) => sent.without(i, names));
          const read = rows.map((_, i) => sent.members(i, names));

          // Assess: the values put back where they were make the row.
          const parsed = JSON.parse(text) as Record<string, unknown>[];
          for (const [i, r] of parsed.entries()) {
            const c = cut[i];
            if (c === undefined) throw new Error('a row the scan follows');
            const left = Buffer.concat(c.left);
            expect(left.length).toBe(c.length);
            const values = read[i] as unknown[];
            expect(values).toEqual(names.map((n) => r[n]));
            const at = c.at
              .map((a, k) => ({ a, k }))
              .filter(({ a }) => a >= 0)
              .sort((x, y) => x.a - y.a);
            let rebuilt = '';
            let from = 0;
            for (const { a, k } of at) {
              rebuilt += left.toString('utf8', from, a);
              rebuilt += JSON.stringify(values[k]);
              from = a;
            }
            rebuilt += left.toString('utf8', from);
            expect(JSON.parse(rebuilt)).toEqual(r);
            expect(c.at.map((a) => a >= 0)).toEqual(names.map((n) => n in r));
          }
        },
      ),
    );
  });

  it('cuts out nothing of a row it does not follow, and the rows after it alike', () => {
    // Prepare: the second row's name holds an escape no parser reads.
    const bytes = Buffer.from('[{"a":1,"usage":2},{"b\\x":1},{"usage":[3]}]');
    const spans = scanArray(bytes);
    if (spans === undefined) throw new Error('scannable');
    const sent = new SentRows(bytes, spans);

    // Act
    const cut = [0, 1, 2].map((i) => sent.without(i, ['usage']));

    // Assess
    expect(cut.map((c) => c?.at)).toEqual([[15], undefined, [9]]);
    expect(cut.map((c) => c && Buffer.concat(c.left).toString())).toEqual([
      '{"a":1,"usage":}',
      undefined,
      '{"usage":}',
    ]);
    expect(sent.members(1, ['usage'])).toBeUndefined();
  });
});
