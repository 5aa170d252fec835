/** The shapes of Kubernetes names that query parameters are checked against. */

/** A namespace or container name. */
export const DNS_1123_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;

/** An object name (workloads, pods): dot-separated labels, 253 at most. */
export const DNS_1123_SUBDOMAIN =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** A kind: an upper-case letter, then at most 62 letters or digits. */
export const KIND_NAME = /^[A-Z][A-Za-z0-9]{0,62}$/;
