/**
 * The shapes of values the wire, the API and the config all check, each
 * defined once. Dependency-free on purpose: an API function's cold start
 * imports this, never the wire schema, to check a UUID or a name.
 */

/** A DNS-1123 label: a namespace, a container, a tenant slug. */
export const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** An object name (workloads, pods): dot-separated labels, 253 at most. */
export const DNS_1123_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A kind: an upper-case letter, then at most 62 letters or digits. */
export const KIND_NAME = /^[A-Z][A-Za-z0-9]{0,62}$/;

/**
 * A label key's name part (after an optional `prefix/`): at most 63
 * characters, alphanumerics at both ends, `-`, `_` and `.` between.
 */
export const LABEL_NAME = /^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/**
 * 8-4-4-4-12 hex digits, either case, spelt out rather than with the `i`
 * flag: a JSON Schema pattern (the wire schema's, the OpenAPI document's)
 * carries no flags.
 */
export const UUID_PATTERN =
  /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;

/**
 * An RFC 3339 time with an offset (`Z` or `±hh:mm`), either case of `T` and
 * `Z`: hours 00–23 (never 24), minutes 00–59, seconds 00–60 (60 is a leap
 * second, RFC 3339 §5.7), offset hours 00–23 and minutes 00–59. Groups: the
 * seconds-precision part, the fraction's digits, the zone. Whether the date
 * exists, and what a leap second reads as, is the reader's check
 * (parseNanoTime; Date.parse rolls a day over and refuses second 60).
 */
export const RFC_3339 =
  /^(\d{4}-\d{2}-\d{2}T(?:[01]\d|2[0-3]):[0-5]\d:(?:[0-5]\d|60))(?:\.(\d+))?(Z|[+-](?:[01]\d|2[0-3]):[0-5]\d)$/i;

/** A path id that is not a UUID names nothing: callers answer 404. */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** A cluster's health, as its agent reports it and the clusters list filters it. */
export const CLUSTER_STATUSES = [
  'healthy',
  'degraded',
  'unreachable',
  'unknown',
] as const;
