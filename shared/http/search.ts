/**
 * Case-insensitive substring search matched literally: the text's `%`, `_`
 * and `\` are escaped, so `%` finds names containing a percent sign rather
 * than every row. Use the pattern with `ilike $n escape '\'` (or `like` against a
 * lowercased key, with `lower($n)`).
 *
 * The rules of a search text are one function, checkSearchText, behind both
 * the inventory lists' `q` (shared/inventory/list.ts) and the clusters
 * list's `search` (searchText).
 */
import * as z from '../zod.ts';
import { withRule } from './fields.ts';

/** The longest search text, in characters (code points) after trimming. */
export const SEARCH_MAX_LENGTH = 100;

/** C0 controls, DEL and C1 controls (Unicode category Cc), tab and newline included. */
const CONTROL_CHARACTER = /\p{Cc}/u;

export type SearchTextProblem = 'control_character' | 'too_long';

export type CheckedSearchText =
  | { term: string | undefined }
  | { problem: SearchTextProblem; message: string };

/**
 * A search text parameter `name` as received: no control character anywhere
 * (even at an end that trimming would remove), then trimmed, at most 100
 * characters. The term is undefined when it is blank: no search.
 */
export function checkSearchText(
  name: string,
  value: string,
): CheckedSearchText {
  if (CONTROL_CHARACTER.test(value)) {
    return {
      problem: 'control_character',
      message: `${name} contains a control character`,
    };
  }
  const term = value.trim();
  // Counted in characters (code points), not UTF-16 units.
  if ([...term].length > SEARCH_MAX_LENGTH) {
    return {
      problem: 'too_long',
      message: `${name} is longer than ${SEARCH_MAX_LENGTH} characters`,
    };
  }
  return { term: term === '' ? undefined : term };
}

/**
 * checkSearchText as a zod field: the clusters list's `search`, and with
 * `withReason` the inventory lists' `q`, whose 400 says which rule failed
 * (details.reason).
 */
export const searchText = (
  name: string,
  options: { withReason?: boolean } = {},
) =>
  withRule(
    z.pipe(
      z.string(),
      z.transform((value, ctx) => {
        const checked = checkSearchText(name, value);
        if ('term' in checked) return checked.term;
        ctx.issues.push({
          code: 'custom',
          message: checked.message,
          input: value,
          ...(options.withReason && { params: { reason: checked.problem } }),
        });
        return z.NEVER;
      }),
    ),
    `text found anywhere in the name, case ignored, \`%\` and \`_\` as themselves; at most ${SEARCH_MAX_LENGTH} characters once trimmed, no control character; empty is none`,
  );

/** `%text%` with LIKE's wildcards and escape character escaped. */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
