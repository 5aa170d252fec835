/**
 * The WebAssembly function that finds where a row ends (object-end.wat):
 * the committed module is the one its source assembles to, and it ends an
 * object where the scan's rule does, on any bytes, wherever the quotes,
 * backslashes and brackets fall in its 64-byte blocks.
 */
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MODULE, objectEndModuleText } from '../../../scripts/wasm-module.ts';
import { objectEnd } from '../../../shared/wire/message-scan.ts';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** The rule, one byte at a time, as message-scan.ts's header states it. */
function referenceEnd(b: Uint8Array, start: number): number {
  let depth = 0;
  for (let at = start; at < b.length; at++) {
    const c = b[at];
    if (c === QUOTE) {
      for (at++; at < b.length && b[at] !== QUOTE; at++) {
        if (b[at] === BACKSLASH) at++;
      }
      if (at >= b.length) return -1;
    } else if (c === 0x7b || c === 0x5b) {
      depth++;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      if (depth === 0) return at + 1;
    }
  }
  return -1;
}

/** Bytes dense in what the rule reads, with an open bracket at `start`. */
const bytesFrom = fc
  .tuple(
    fc.array(fc.constantFrom(...Buffer.from('"\\{}[]a :,\u00e9')), {
      maxLength: 300,
    }),
    fc.nat(80),
    fc.constantFrom(0x7b, 0x5b),
  )
  .map(([body, start, open]) => {
    const b = Buffer.alloc(start + 1 + body.length, 0x61);
    b[start] = open;
    Buffer.from(body).copy(b, start + 1);
    return { b, start };
  });

describe('objectEnd', () => {
  it('is assembled from its source', async () => {
    expect(
      readFileSync(MODULE, 'utf8'),
      'object-end-wasm.ts is stale: run `npm run wasm` and commit it',
    ).toBe(await objectEndModuleText());
  });

  it('ends an object where the rule does, on any bytes', () => {
    fc.assert(
      fc.property(bytesFrom, ({ b, start }) => {
        expect(objectEnd(b, start)).toBe(referenceEnd(b, start));
      }),
      { numRuns: 3000 },
    );
  });

  it('ends an object of JSON where a parser does, across many blocks', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.string(), (value, pad) => {
        const text = JSON.stringify({ pad, value, tail: [value] });
        const b = Buffer.from(`${text} ,`);
        expect(objectEnd(b, 0)).toBe(Buffer.byteLength(text));
      }),
      { numRuns: 500 },
    );
  });

  it('carries strings and escapes from one block to the next', () => {
    for (let at = 1; at < 140; at++) {
      // A string from byte `at` on, holding an escaped quote, a run of
      // backslashes and brackets, across the block boundaries after it.
      const b = Buffer.alloc(200, 0x20);
      b[0] = 0x7b;
      const s = Buffer.from('"x\\"}\\\\\\\\]\\\\\\"{"');
      s.copy(b, at);
      b[at + s.length + 3] = 0x7d;
      expect(objectEnd(b, 0), `string at ${at}`).toBe(at + s.length + 4);
      expect(objectEnd(b, 0)).toBe(referenceEnd(b, 0));
    }
  });

  it('reads none of the memory past the bytes given, after a longer copy', () => {
    const long = Buffer.from(`{"a":"${'x'.repeat(500)}"}`);
    expect(objectEnd(long, 0)).toBe(long.length);
    // The same bytes without the last quote and brace: left open.
    expect(objectEnd(long.subarray(0, long.length - 2), 0)).toBe(-1);
    expect(objectEnd(long.subarray(0, long.length - 1), 0)).toBe(-1);
  });
});
