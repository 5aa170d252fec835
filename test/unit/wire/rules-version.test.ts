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
