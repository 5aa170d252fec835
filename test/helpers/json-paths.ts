/**
 * Paths into a JSON value and edits at them, for the fuzzers that mutate a
 * real payload one value at a time.
 */

export type JsonPath = (string | number)[];

/** Every path to a value inside `value`, the root included. */
export function jsonPaths(value: unknown, prefix: JsonPath = []): JsonPath[] {
  if (value === null || typeof value !== 'object') return [prefix];
  const entries = Array.isArray(value)
    ? value.map((v, i) => [i, v] as const)
    : Object.entries(value);
  return [prefix, ...entries.flatMap(([k, v]) => jsonPaths(v, [...prefix, k]))];
}

/** A copy of `body` with the value at `path` deleted or replaced. */
export function withValueAt(
  body: unknown,
  path: JsonPath,
  replacement: unknown,
  remove: boolean,
): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(body);
  let parent = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) {
    parent = parent[key] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1] as string | number;
  if (remove) delete parent[last];
  else parent[last] = replacement;
  return copy;
}
