/**
 * The scan that finds each row's bytes without parsing the rows: on any
 * JSON it must cut exactly where a parser would, and on anything else it
 * may only give up or cut pieces that, when they all parse, parse to what
 * the whole message parses to.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  memberSpan,
  memberSpansOfRows,
  type ScannedMessage,
  scanArray,
  scanMessage,
} from '../../../shared/wire/message-scan.ts';

const ARRAYS = new Set(['pods', 'nodes']);
const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

/** Each scanned array's rows, parsed from their spans. */
function rowsOf(bytes: Buffer, scanned: ScannedMessage) {
  const out: Record<string, unknown[]> = {};
  for (const [name, spans] of scanned.rows) {
    out[name] = spans.starts.map((start, i) =>
      JSON.parse(bytes.toString('utf8', start, spans.ends[i])),
    );
  }
  return out;
}

/** A message: some members, the two arrays among them, in any order. */
const message = fc
  .record({
    other: fc.dictionary(fc.string(), fc.jsonValue()),
    pods: fc.option(fc.array(fc.jsonValue()), { nil: undefined }),
    nodes: fc.option(fc.array(fc.jsonValue()), { nil: undefined }),
  })
  .map(({ other, pods, nodes }) => {
    const out: Record<string, unknown> = { ...other };
    delete out.pods;
    delete out.nodes;
    if (pods !== undefined) out.pods = pods;
    if (nodes !== undefined) out.nodes = nodes;
    return out;
  });

describe('scanMessage', () => {
  it('cuts every row of any JSON message where a parser ends it, spaced or not', () => {
    fc.assert(
      fc.property(
        message,
        fc.constantFrom(undefined, 1, '\t', ' \n '),
        (value, space) => {
          // Prepare
          const bytes = Buffer.from(JSON.stringify(value, null, space));

          // Act
          const scanned = scanMessage(bytes, ARRAYS);

          // Assess
          expect(scanned).toBeDefined();
          if (scanned === undefined) return;
          const expected: Record<string, unknown[]> = {};
          const envelope = { ...value };
          for (const name of ARRAYS) {
            const rows = value[name];
            if (Array.isArray(rows)) {
              expected[name] = JSON.parse(JSON.stringify(rows));
              envelope[name] = [];
            }
          }
          expect(rowsOf(bytes, scanned)).toEqual(expected);
          expect(JSON.parse(text(scanned.envelope))).toEqual(
            JSON.parse(JSON.stringify(envelope)),
          );
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never yields pieces that all parse unless the whole message parses to them', () => {
    // A valid message with bytes replaced, inserted or deleted.
    const damaged = fc
      .tuple(
        message,
        fc.array(
          fc.tuple(
            fc.nat(),
            fc.constantFrom(
              '"',
              '\\',
              '{',
              '}',
              '[',
              ']',
              ',',
              ':',
              ' ',
              'x',
              '1',
              '"pods":',
            ),
            fc.constantFrom('replace', 'insert', 'delete'),
          ),
          { minLength: 1, maxLength: 3 },
        ),
      )
      .map(([value, edits]) => {
        let json = JSON.stringify(value);
        for (const [at, piece, how] of edits) {
          const i = json.length === 0 ? 0 : at % json.length;
          json =
            how === 'insert'
              ? json.slice(0, i) + piece + json.slice(i)
              : how === 'delete'
                ? json.slice(0, i) + json.slice(i + 1)
                : json.slice(0, i) + piece + json.slice(i + 1);
        }
        return json;
      });
    fc.assert(
      fc.property(damaged, (json) => {
        // Prepare
        const bytes = Buffer.from(json);

        // Act
        const scanned = scanMessage(bytes, ARRAYS);

        // Assess
        if (scanned === undefined) return;
        let envelope: unknown;
        let rows: Record<string, unknown[]>;
        try {
          envelope = JSON.parse(text(scanned.envelope));
          rows = rowsOf(bytes, scanned);
        } catch {
          return; // a piece is no JSON: the message is decoded whole
        }
        const whole = JSON.parse(json) as Record<string, unknown>;
        expect({
          ...whole,
          ...Object.fromEntries(
            [...ARRAYS]
              .filter((n) => Array.isArray(whole[n]))
              .map((n) => [n, []]),
          ),
        }).toEqual(envelope);
        for (const name of ARRAYS) {
          if (Array.isArray(whole[name]))
            expect(rows[name]).toEqual(whole[name]);
          else expect(rows[name]).toBeUndefined();
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a member named twice by its last occurrence, and an escaped name as a parser does', () => {
    // Prepare
    const json =
      '{"pods":[{"a":1}],"p\\u006fds":[{"b":2},3],"nodes":[{"c":1}],"nodes":null}';
    const bytes = Buffer.from(json);

    // Act
    const scanned = scanMessage(bytes, ARRAYS);

    // Assess
    expect(scanned).toBeDefined();
    if (scanned === undefined) return;
    expect(rowsOf(bytes, scanned)).toEqual({ pods: [{ b: 2 }, 3] });
    expect(JSON.parse(text(scanned.envelope))).toEqual({
      pods: [],
      nodes: null,
    });
  });

  it('gives up on what is no object, trailing bytes and a broken name escape', () => {
    for (const json of [
      '[1]',
      '{"pods":[1]} x',
      '{"pods":[1,]}',
      '{"pods":[,1]}',
      '{"po\\uZZds":[1]}',
      '{"pods":[{"a":"unterminated}]}',
      '{"pods" [1]}',
    ]) {
      expect(scanMessage(Buffer.from(json), ARRAYS), json).toBeUndefined();
    }
  });

  it('skips strings whose quotes are escaped, however many backslashes precede them', () => {
    // Prepare
    const rows = [{ a: 'x\\' }, { a: 'say \\"hi\\"' }, { a: '\\\\"]' }, 'a"b'];
    const bytes = Buffer.from(JSON.stringify({ pods: rows }));

    // Act
    const scanned = scanMessage(bytes, ARRAYS);

    // Assess
    expect(scanned && rowsOf(bytes, scanned)).toEqual({ pods: rows });
  });
  it('ends a string at a quote after an even run of backslashes, wherever it falls in a word', () => {
    // The scan reads four bytes at a time: each run and quote is tried at
    // every offset from the string's start and from the message's end.
    fc.assert(
      fc.property(
        fc.string({ maxLength: 9 }),
        fc.integer({ min: 0, max: 9 }),
        fc.string({ maxLength: 9 }),
        fc.integer({ min: 0, max: 7 }),
        (before, slashes, after, padding) => {
          // Prepare
          const value = `${before}${'\\'.repeat(slashes)}"${after}`;
          const rows = [{ a: value, b: '}]' }, value, [value]];
          const json = `${JSON.stringify({ pods: rows })}${' '.repeat(padding)}`;
          const bytes = Buffer.from(json);

          // Act
          const scanned = scanMessage(bytes, ARRAYS);

          // Assess
          expect(scanned && rowsOf(bytes, scanned)).toEqual({ pods: rows });
        },
      ),
      { numRuns: 500 },
    );
  });

  it('skips brackets, braces and escaped quotes inside strings, long ones too', () => {
    // Prepare
    const long = `${'x'.repeat(41)}\\"]}{[${'y'.repeat(17)}`;
    const rows = [
      { a: '[{', b: ['}]', '\\"'] },
      { [long]: long, c: '"\\\\"' },
      '\\\\\\"',
      'é"ü{ 😀 ]',
    ];
    const bytes = Buffer.from(JSON.stringify({ pods: rows, nodes: [long] }));

    // Act
    const scanned = scanMessage(bytes, ARRAYS);

    // Assess
    expect(scanned && rowsOf(bytes, scanned)).toEqual({
      pods: rows,
      nodes: [long],
    });
  });

  it('gives up on a string left open, however close to the end it stops', () => {
    for (const json of [
      '{"pods":[{"a":"b}]}',
      '{"pods":[{"a":"b\\"}]}',
      '{"pods":[{"a":"b\\\\\\"}]}',
      '{"pods":["abcdefghijklmnop\\',
      '{"pods":["abcdefghijklmnop\\"',
      '{"pods":["',
      '{"pods":["\\',
      '{"pods":[1]}"',
      '{"pods":[1],"nodes":"]}',
    ]) {
      expect(scanMessage(Buffer.from(json), ARRAYS), json).toBeUndefined();
    }
  });

  it('reads the bytes given, not the memory around them', () => {
    // Prepare: the message sits inside a larger buffer, at an odd offset,
    // followed by quotes a scan reading past its end would take.
    const json = '{"pods":[{"a":"x\\"y"},"abcdefgh"]}';
    const whole = Buffer.from(`"${json}""""""""`);
    const bytes = new Uint8Array(
      whole.buffer,
      whole.byteOffset + 1,
      json.length,
    );

    // Act
    const scanned = scanMessage(bytes, ARRAYS);
    const cut = scanMessage(bytes.subarray(0, json.length - 6), ARRAYS);

    // Assess
    expect(scanned && rowsOf(Buffer.from(bytes), scanned)).toEqual({
      pods: [{ a: 'x"y' }, 'abcdefgh'],
    });
    expect(cut).toBeUndefined();
  });
});

describe('memberSpan', () => {
  it('finds the last occurrence of a member at the top of an object only', () => {
    // Prepare
    const json =
      '{"x":{"spec_facts":1},"spec_facts":2, "spec_facts" : {"a":[3]} ,"y":4}';
    const bytes = Buffer.from(json);

    // Act
    const span = memberSpan(bytes, 0, 'spec_facts');

    // Assess
    expect(span).toBeTruthy();
    if (!span) return;
    expect(json.slice(span.valueStart, span.valueEnd)).toBe('{"a":[3]}');
    expect(json.slice(span.nameStart, span.nameStart + 12)).toBe(
      '"spec_facts"',
    );
  });

  it('reads member names as a parser does: escaped, non-ASCII, or a prefix of the name', () => {
    // Prepare
    const json =
      '{"spec_fact":1,"spec_facts2":2,"spéc_facts":3,"spec\\u005ffacts":4,"x":5}';
    const bytes = Buffer.from(json);

    // Act
    const span = memberSpan(bytes, 0, 'spec_facts');
    const accented = memberSpan(bytes, 0, 'spéc_facts');
    const broken = memberSpan(
      Buffer.from('{"spec_facts":1,"a\\uZZ":2}'),
      0,
      'spec_facts',
    );

    // Assess
    expect(span && bytes.toString('utf8', span.valueStart, span.valueEnd)).toBe(
      '4',
    );
    expect(
      accented &&
        bytes.toString('utf8', accented.valueStart, accented.valueEnd),
    ).toBe('3');
    expect(broken).toBeUndefined();
  });

  it('tells an object without the member from bytes it cannot follow', () => {
    expect(memberSpan(Buffer.from('{"a":1}'), 0, 'spec_facts')).toBeNull();
    expect(
      memberSpan(Buffer.from('{"a":1,\u0001}'), 0, 'spec_facts'),
    ).toBeUndefined();
    expect(memberSpan(Buffer.from('[1]'), 0, 'spec_facts')).toBeUndefined();
    // A string left open by an escaped quote in the very last bytes.
    expect(
      memberSpan(Buffer.from('{"a":"\\"}'), 0, 'spec_facts'),
    ).toBeUndefined();
    expect(memberSpan(Buffer.from('{"a":"\\\\"}'), 0, 'a')).toBeTruthy();
  });
});

describe('memberSpansOfRows', () => {
  /** A row's members: `usage` at any depth, any number of times, spaced or not. */
  const row = fc
    .array(
      fc.tuple(
        fc.constantFrom('usage', 'usag', 'usages', 'x', '"usage"', 'us\\age'),
        fc.oneof(
          fc.jsonValue(),
          fc.constant('usage'),
          fc.record({ usage: fc.jsonValue() }),
        ),
        fc.constantFrom('', ' ', '\n '),
      ),
      { maxLength: 8 },
    )
    .map((members) =>
      members.length === 0
        ? '{}'
        : `{${members.map(([name, value, space]) => `${JSON.stringify(name)}${space}:${space}${JSON.stringify(value)}`).join(',')}}`,
    );

  it("finds each row's last top-level member as a parser reads it, rows with escapes or not", () => {
    fc.assert(
      fc.property(fc.array(row, { minLength: 1, maxLength: 6 }), (rows) => {
        const bytes = Buffer.from(`[${rows.join(' , ')}]`);
        const spans = scanArray(bytes);
        expect(spans).toBeDefined();
        if (!spans) return;
        const found = memberSpansOfRows(bytes, spans, ['usage', 'x']);
        rows.forEach((text, i) => {
          const parsed = JSON.parse(text) as Record<string, unknown>;
          const [usage, x] = found[i] ?? [];
          for (const [name, span] of [
            ['usage', usage],
            ['x', x],
          ] as const) {
            if (!(name in parsed)) {
              expect(span).toBeNull();
            } else {
              expect(span).toBeTruthy();
              if (!span) continue;
              expect(
                JSON.parse(
                  bytes.toString('utf8', span.valueStart, span.valueEnd),
                ),
              ).toEqual(parsed[name]);
              expect(
                JSON.parse(
                  bytes.toString(
                    'utf8',
                    span.nameStart,
                    bytes.indexOf(':', span.nameStart + name.length + 2),
                  ),
                ),
              ).toBe(name);
            }
          }
        });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads a row past 64 bytes, its member at any offset from a block', () => {
    for (let pad = 0; pad < 140; pad++) {
      const text = `{"a":"${'{'.repeat(pad)}","b":[{"usage":1}],"usage":{"c":"}"}}`;
      const bytes = Buffer.from(`[${text}]`);
      const spans = scanArray(bytes);
      if (!spans) throw new Error('unscanned');
      const [usage] = memberSpansOfRows(bytes, spans, ['usage'])[0] ?? [];
      expect(
        usage && bytes.toString('utf8', usage.valueStart, usage.valueEnd),
      ).toBe('{"c":"}"}');
    }
  });
});

describe('scanArray', () => {
  it('cuts the elements of a JSON.stringify array', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), (values) => {
        const bytes = Buffer.from(JSON.stringify(values));
        const spans = scanArray(bytes);
        expect(
          spans?.starts.map((s, i) =>
            JSON.parse(bytes.toString('utf8', s, spans.ends[i])),
          ),
        ).toEqual(JSON.parse(JSON.stringify(values)));
      }),
    );
  });
});
