/**
 * Case-insensitive substring search matched literally: the text's `%`, `_`
 * and `\` are escaped, so `%` finds names containing a percent sign rather
 * than every row. Use the pattern with `ilike $n escape '\'` (or `like` against a
 * lowercased key, with `lower($n)`).
 */
import { z } from 'zod';

/** The longest search text, in characters (code points) after trimming. */
export const SEARCH_MAX_LENGTH = 100;

/** C0 controls, DEL and C1 controls (Unicode category Cc), tab and newline included. */
export const CONTROL_CHARACTER = /\p{Cc}/u;

/**
 * A search text parameter: no control character anywhere (even at an end
 * that trimming would remove, as for q), then trimmed, at most 100
 * characters; an empty value means no search.
 */
export const searchText = (name: string) =>
  z
    .string()
    .refine(
      (value) => !CONTROL_CHARACTER.test(value),
      `${name} contains a control character`,
    )
    .transform((value) => value.trim())
    .refine(
      (value) => [...value].length <= SEARCH_MAX_LENGTH,
      `${name} may be at most ${SEARCH_MAX_LENGTH} characters`,
    )
    .transform((value) => (value === '' ? undefined : value));

/** `%text%` with LIKE's wildcards and escape character escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
