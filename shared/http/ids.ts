/** Path ids. A path id that is not a UUID names nothing: callers answer 404. */
import { UUID_PATTERN } from '../ids.ts';

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}
