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
      version: '2',
      fingerprint:
        '35e9f1fdfc2ad2e6ccbffe89e4ba88152a50f3c9bf9c589d6a5a8b2500b16efb',
    });
  });
});
