/**
 * Case-insensitive substring search matched literally: the text's `%`, `_`
 * and `\` are escaped, so `%` finds names containing a percent sign rather
 * than every row. Use the pattern with `ilike $n escape '\'` (or `like` against a
 * lowercased key, with `lower($n)`).
 */
import { z } from 'zod';

export const SEARCH_MAX_LENGTH = 100;

// C0 and C1 control characters (tab and newline included).
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * A search text parameter: trimmed, at most 100 characters, no control
 * characters; an empty value means no search.
 */
export const searchText = (name: string) =>
  z
    .string()
    .transform((value) => value.trim())
    .refine(
      (value) => !CONTROL.test(value),
      `${name} contains a control character`,
    )
    .refine(
      (value) => value.length <= SEARCH_MAX_LENGTH,
      `${name} may be at most ${SEARCH_MAX_LENGTH} characters`,
    )
    .transform((value) => (value === '' ? undefined : value));

/** `%text%` with LIKE's wildcards and escape character escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
