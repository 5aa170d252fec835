/**
 * Bounds for the free-form JSON the inventory carries as sent (network policy
 * selectors and rules). They are stored and shown, never interpreted, so the
 * schema cannot check their shape; it checks their depth and size instead,
 * since a deeply nested value makes every later recursive step (JSON
 * serialisation, jsonb input) fail with a stack overflow.
 *
 * The walk uses an explicit stack, never recursion, so the check itself is
 * safe on any input JSON.parse can produce.
 */
export const JSON_BOUNDS = {
  /**
   * Nesting levels below the field. A NetworkPolicy rule is at most five
   * deep (`from[].podSelector.matchExpressions[].values[]`).
   */
  maxDepth: 16,
  /** Objects, arrays and scalars in one field's value, all levels. */
  maxValues: 10_000,
  /** Characters of any key or string. */
  maxString: 2048,
} as const;

export interface JsonBoundViolation {
  /** Where, relative to the field: keys and indexes. */
  path: (string | number)[];
  /** The rule broken, never the value. */
  rule: string;
}

/** The first place `value` breaks a bound, or undefined when it keeps them all. */
export function jsonBoundViolation(
  value: unknown,
  bounds: {
    maxDepth: number;
    maxValues: number;
    maxString: number;
  } = JSON_BOUNDS,
): JsonBoundViolation | undefined {
  const stack: { value: unknown; path: (string | number)[] }[] = [
    { value, path: [] },
  ];
  let values = 0;
  while (stack.length > 0) {
    const { value: current, path } = stack.pop()!;
    values++;
    if (values > bounds.maxValues) {
      return {
        path,
        rule: `more than ${bounds.maxValues} values in one field`,
      };
    }
    if (typeof current === 'string') {
      if (current.length > bounds.maxString) {
        return { path, rule: `longer than ${bounds.maxString} characters` };
      }
      continue;
    }
    if (typeof current !== 'object' || current === null) continue;
    if (path.length >= bounds.maxDepth) {
      return { path, rule: `nested deeper than ${bounds.maxDepth} levels` };
    }
    if (Array.isArray(current)) {
      for (let i = current.length - 1; i >= 0; i--) {
        stack.push({ value: current[i], path: [...path, i] });
      }
      continue;
    }
    const keys = Object.keys(current);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      if (key.length > bounds.maxString) {
        return {
          path,
          rule: `a key longer than ${bounds.maxString} characters`,
        };
      }
      stack.push({
        value: (current as Record<string, unknown>)[key],
        path: [...path, key],
      });
    }
  }
  return undefined;
}
