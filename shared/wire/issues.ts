/**
 * How a refusal names what is wrong with a message: each issue as
 * `path: rule`, short, naming the field and the rule, never the value.
 */
import type { z } from 'zod';

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'a boolean',
  object: 'an object',
  record: 'an object',
  array: 'an array',
  null: 'null',
};

/** Messages for every issue zod can raise here: short and rule-naming. */
export const errorMap: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type':
      if (iss.input === undefined) return 'required';
      return `expected ${EXPECTED[iss.expected] ?? iss.expected}`;
    case 'too_big': {
      const max = String(iss.maximum);
      if (iss.origin === 'string') return `longer than ${max} characters`;
      if (iss.origin === 'array') return `more than ${max} items`;
      return `must be at most ${max}`;
    }
    case 'too_small': {
      const min = String(iss.minimum);
      if (iss.origin === 'string') {
        return min === '1' ? 'must not be empty' : `shorter than ${min}`;
      }
      if (iss.origin === 'array') return `fewer than ${min} items`;
      return iss.inclusive ? `must be at least ${min}` : `must exceed ${min}`;
    }
    case 'invalid_format':
      if (iss.format === 'datetime') {
        return 'expected an RFC 3339 time with an offset';
      }
      if (iss.format === 'uuid' || iss.format === 'guid') {
        return 'expected a UUID';
      }
      return `expected the ${iss.format} format`;
    case 'invalid_value': {
      const values = iss.values.map((v) => JSON.stringify(v));
      return values.length === 1
        ? `expected ${values[0]}`
        : `expected one of ${values.join(', ')}`;
    }
    case 'invalid_key':
      return 'invalid key';
    case 'invalid_union':
      return 'matches none of the allowed forms';
    default:
      return undefined;
  }
};

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Longer keys are not quoted in a path (a label key is at most 317). */
const MAX_PATH_KEY_CHARS = 64;

/** `workloads[3].containers[0].name`, `labels["app.kubernetes.io/name"]`. */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') {
      out += `[${part}]`;
    } else {
      const key = String(part);
      if (key.length > MAX_PATH_KEY_CHARS) {
        // A key this long is payload, not a name: say what it is instead.
        out += `[a key of ${key.length} characters]`;
      } else if (IDENTIFIER.test(key)) {
        out += out === '' ? key : `.${key}`;
      } else {
        out += `[${JSON.stringify(key)}]`;
      }
    }
  }
  return out === '' ? 'inventory' : out;
}

/**
 * The first `max` issues as `path: rule`, joined by "; ", with a count of the
 * rest: `workloads[3].replicas_desired: expected an integer (+2 more)`.
 */
export function formatIssues(error: z.core.$ZodError, max = 5): string {
  return formatIssueList(error.issues, max);
}

export function formatIssueList(
  issues: readonly z.core.$ZodIssue[],
  max = 5,
): string {
  const shown = issues.slice(0, Math.max(1, max)).map((issue) => {
    let message = issue.message;
    if (issue.code === 'invalid_key' && issue.issues[0]) {
      message = `invalid key: ${issue.issues[0].message}`;
    }
    return `${formatPath(issue.path)}: ${message}`;
  });
  const rest = issues.length - shown.length;
  return rest > 0 ? `${shown.join('; ')} (+${rest} more)` : shown.join('; ');
}
