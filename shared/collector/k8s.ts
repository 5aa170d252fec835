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

// ------------------------------------------------------------- free text

/** A surrogate code unit, paired or not: storableText's fast path. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** ES2024's String methods (Node 20 has them; the project's lib is ES2023). */
type WellFormedString = string & { toWellFormed(): string };

/**
 * Text from the cluster as the backend can store it. The backend refuses a
 * whole inventory over one string that holds a NUL (PostgreSQL text cannot)
 * or a lone surrogate (not Unicode), and must (wire/storable-text.ts), so
 * the agent must never send one. Kubernetes validates names, namespaces,
 * labels and annotation keys, not free text: an event's or a condition's
 * message, a reason, an image, an owner reference's name, an annotation's
 * value or anything a CRD holds may carry a NUL (an exec probe that prints
 * /proc/<pid>/cmdline puts one between every argument). Every such field
 * the collector sends passes through here, or through `cut`.
 *
 * Each NUL becomes a space, as `ps` shows a command line: a NUL is how
 * /proc/<pid>/cmdline separates arguments, so `mysql\0--password\0pw` reads
 * `mysql --password pw`, which the secret sanitizer then sees as a flag and
 * its value (with NULs it saw one word and hid nothing). Each lone
 * surrogate becomes U+FFFD, the replacement character, as `toWellFormed`
 * makes it. Nothing is dropped: the length stays the same and a non-empty
 * value never becomes empty. Text that is already storable (almost all) is
 * returned as it is.
 */
export function storableText(text: string): string {
  if (!text.includes('\u0000') && !SURROGATE.test(text)) return text;
  return (text.replaceAll('\u0000', ' ') as WellFormedString).toWellFormed();
}

/**
 * storableText of at most `max` UTF-16 code units (what the wire schema's
 * limits count, as `String.length` and zod's `.max` do), cut at a code
 * point: a surrogate pair the limit would split is left out whole, so the
 * text may be one unit shorter than `max`, never end in half a character.
 */
export function cut(text: string | null, max: number): string | null {
  if (text === null) return null;
  const storable = storableText(text);
  if (storable.length <= max) return storable;
  // Well-formed: a high surrogate here is the first half of a pair.
  const last = storable.charCodeAt(max - 1);
  return storable.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/** A string as storable free text (storableText), or null. */
export const freeText = (v: unknown): string | null =>
  typeof v === 'string' ? storableText(v) : null;

/** A non-empty string as storable free text, or null. */
export const nonEmptyFreeText = (v: unknown): string | null =>
  typeof v === 'string' && v !== '' ? storableText(v) : null;

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
