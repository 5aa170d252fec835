/**
 * The sync worker's decode path keeps a message's rows as sent, each kind's
 * rows carrying the body they were cut from (SentRows.message), so that a
 * row found malformed later is refused as the whole path refuses the body.
 */
import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import {
  decodeInventoryJson,
  toWireInventory,
  validateRows,
} from '../../../shared/wire/decode.ts';
import { parseInventoryJson } from '../../../shared/wire/inventory.ts';

const ENVELOPE =
  '"type":"kubernetes","schema_version":1,"agent_id":"0b5e3a6c-1d2e-4f50-8a9b-0c1d2e3f4a5b","timestamp":"2026-06-15T12:00:00Z","cluster":{"name":"c1"}';

function reasonOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(RejectedInventoryError);
    return (error as RejectedInventoryError).reason;
  }
  return undefined;
}

describe('decodeInventoryJson', () => {
  it('gives every kind of one body the same message, and rows given as values none', () => {
    // Prepare
    const body = `{${ENVELOPE},"nodes":[{"name":"n1"}],"namespaces":[{"name":"a"}]}`;

    // Act
    const decoded = decodeInventoryJson(body);
    const fromValues = toWireInventory(parseInventoryJson(body));

    // Assess
    expect(decoded.nodes?.message).toBeDefined();
    expect(decoded.nodes?.message).toBe(decoded.namespaces?.message);
    expect(Buffer.from(decoded.nodes?.message?.bytes ?? []).toString()).toBe(
      body,
    );
    expect(fromValues.nodes?.message).toBeUndefined();
  });

  it('refuses a row that is no JSON by its place in the body, as the whole path does', () => {
    // Prepare: the scan cuts rows without checking them; a parser does not.
    const body = `{${ENVELOPE},"namespaces":[{"name":"a"},{"name":"b",}]}`;
    const decoded = decodeInventoryJson(body);

    // Act
    const reason = reasonOf(() => validateRows(decoded, { namespaces: [1] }));

    // Assess
    expect(reason).toMatch(/^body: invalid JSON \(at position \d+\)$/);
    expect(reason).toBe(reasonOf(() => parseInventoryJson(body)));
  });

  it('refuses text PostgreSQL cannot store that a body spells, naming the row', () => {
    // Prepare
    const body = `{${ENVELOPE},"namespaces":[{"name":"a\\u0000"}]}`;
    const decoded = decodeInventoryJson(body);

    // Act
    const reason = reasonOf(() => validateRows(decoded, { namespaces: [0] }));

    // Assess
    expect(decoded.namespaces?.message?.mayHoldUnstorable).toBe(true);
    expect(reason).toBe(reasonOf(() => parseInventoryJson(body)));
    expect(reason).toMatch(/^namespaces\[0\]\.name: /);
  });
});
