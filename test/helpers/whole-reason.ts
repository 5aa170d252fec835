/**
 * The reason the whole-message path (every row checked against the full
 * schema) refuses `json` with: what the sync's selective validation must
 * refuse the same message with.
 */
import type { RejectedInventoryError } from '../../shared/errors.ts';
import { parseInventoryJson } from '../../shared/wire/inventory.ts';

export function wholeReason(json: string): string {
  try {
    parseInventoryJson(json);
  } catch (error) {
    return (error as RejectedInventoryError).reason;
  }
  throw new Error('the whole schema accepted it');
}
