/** The shapes of Kubernetes names that query parameters are checked against. */

/** A namespace or container name. */
export const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** An object name (workloads, pods): dot-separated labels, 253 at most. */
export const DNS_1123_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A kind: an upper-case letter, then at most 62 letters or digits. */
export const KIND_NAME = /^[A-Z][A-Za-z0-9]{0,62}$/;

/** An RFC 3339 date-time with a zone (`2026-05-01T10:00:00Z`, `+02:00`). */
const RFC_3339_TIME =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** Whether `value` is an RFC 3339 date-time that names a real moment. */
export function isRfc3339Time(value: string): boolean {
  return RFC_3339_TIME.test(value) && !Number.isNaN(Date.parse(value));
}
