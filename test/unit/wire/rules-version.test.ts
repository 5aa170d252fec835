/**
 * The sync skips validating a row whose bytes it accepted before under the
 * same WIRE_RULES_VERSION (issue #15), so a change to what the schema
 * accepts must come with a bump of that version.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  inventorySchema,
  mayHoldOverflowingNumber,
  WIRE_RULES_VERSION,
} from '../../../shared/wire/inventory.ts';

describe('the wire rules version', () => {
  it('names the schema it was bumped for', () => {
    // A change to the schema fails this test: bump WIRE_RULES_VERSION (every
    // stored row is then validated and written once more), then record the
    // new fingerprint here.
    const fingerprint = createHash('sha256')
      .update(
        JSON.stringify(
          z.toJSONSchema(inventorySchema, {
            unrepresentable: 'any',
            io: 'input',
          }),
        ),
      )
      .digest('hex');
    expect({ version: WIRE_RULES_VERSION, fingerprint }).toEqual({
      version: '1',
      fingerprint:
        'c5000763a4ebee50cf90f6a86d179d5bc842d379d0b594f5065c164064c98e95',
    });
  });
});

describe('mayHoldOverflowingNumber', () => {
  it('finds every number literal that parses to Infinity', () => {
    for (const literal of [
      '1e400',
      '-1e309',
      '1.8e308',
      '2E+308',
      '0.5e999',
      '9'.repeat(309),
      `-${'1'.repeat(400)}.5`,
    ]) {
      for (const json of [
        `{"a":${literal}}`,
        `{"a": [1, ${literal}]}`,
        `{"a":[\n${literal}\n]}`,
        `{"x":"${'y'.repeat(200)}","a":${literal}}`,
      ]) {
        expect(Math.abs(JSON.parse(json).a?.[1] ?? JSON.parse(json).a)).toBe(
          Number.POSITIVE_INFINITY,
        );
        expect(mayHoldOverflowingNumber(json), json).toBe(true);
      }
    }
  });

  it('passes over finite numbers and exponents inside names and hashes', () => {
    for (const json of [
      '{"a":1e99,"b":1.5e-400,"c":123456789012345678901234567890}',
      '{"sha":"sha256:9e123f0a1e999","uid":"5e100000-0000-4000-8000-000000000000"}',
      '{"a":"sha256:9e123","b":"x 1e400y"}',
      `{"a":${'9'.repeat(308)}}`,
    ]) {
      expect(mayHoldOverflowingNumber(json), json).toBe(false);
    }
  });
});
