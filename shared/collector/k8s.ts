/**
 * Kubernetes API objects as the apiserver serves them (JSON, camelCase),
 * the collector's only input. They are read field by field with the
 * helpers here and never trusted to have any field: an old cluster, a CRD
 * or an upstream edit may leave any of them out.
 */

/** An API object or any JSON value inside one. */
// biome-ignore lint/suspicious/noExplicitAny: API objects are read defensively, field by field.
export type K8sObject = any;

export const str = (v: unknown): string | null =>
  typeof v === 'string' ? v : null;

/** A non-empty string, or null. */
export const nonEmpty = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? v : null;

/** A non-negative 32-bit integer (a count, a port), or null. */
export const count = (v: unknown): number | null =>
  typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2_147_483_647
    ? v
    : null;

export const bool = (v: unknown): boolean | null =>
  typeof v === 'boolean' ? v : null;

export const array = (v: unknown): K8sObject[] => (Array.isArray(v) ? v : []);

/** A string map (labels, selectors), non-strings left out. */
export function stringMap(v: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof v !== 'object' || v === null) return out;
  for (const [key, value] of Object.entries(v)) {
    if (typeof value === 'string') out[key] = value;
  }
  return out;
}

/** Strings only, empty ones dropped. */
export const strings = (v: unknown): string[] =>
  array(v).filter((s): s is string => typeof s === 'string' && s !== '');

/** Code-point order, the same on every machine (no locale). */
export const byString = (a: string, b: string): number =>
  a < b ? -1 : a > b ? 1 : 0;

/** Sorted and de-duplicated. */
export const sortedUnique = (values: Iterable<string>): string[] =>
  [...new Set(values)].sort(byString);

/** `intstr` as written: a number or a string, as a string ("25%", "1"). */
export function intOrStringText(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  if (typeof v === 'string' && v !== '') return v;
  return undefined;
}

/** The owner reference marked `controller: true`, else the only one. */
export function controllerOf(object: K8sObject): K8sObject | undefined {
  const owners = array(object?.metadata?.ownerReferences);
  return owners.find((o) => o?.controller === true) ?? owners[0];
}

export const nsName = (namespace: unknown, name: unknown): string =>
  `${String(namespace)}/${String(name)}`;
