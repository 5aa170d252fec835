import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  mayHoldUnstorableBytes,
  mayHoldUnstorableText,
} from '../../../shared/wire/storable-text.ts';

describe('mayHoldUnstorableBytes', () => {
  it('finds what the text check finds, in any JSON text', () => {
    // Pieces that make or nearly make the escapes looked for.
    const piece = fc.constantFrom(
      '\\u0000',
      '\\u000',
      '\\ud83d',
      '\\uD800',
      '\\udfff',
      '\\ud7ff',
      '\\uDc',
      '\\u003c',
      '\\\\u0000',
      '\\u',
      'é',
      '"a":',
      ' ',
    );
    const text = fc.array(fc.oneof(piece, fc.string()), { maxLength: 12 });
    fc.assert(
      fc.property(text, (pieces) => {
        const json = pieces.join('');
        expect(mayHoldUnstorableBytes(Buffer.from(json))).toBe(
          mayHoldUnstorableText(json),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('finds an escape at the very end and none in plain text', () => {
    expect(mayHoldUnstorableBytes(Buffer.from('{"a":"x\\ud800'))).toBe(true);
    expect(mayHoldUnstorableBytes(Buffer.from('{"a":"x\\ud'))).toBe(false);
    expect(
      mayHoldUnstorableBytes(Buffer.from('{"a":"\\u003c/b\\u003e"}')),
    ).toBe(false);
  });
});
