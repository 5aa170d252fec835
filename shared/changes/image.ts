/**
 * Image references as the change summary shows them. Only the reference the
 * workload spec names is read; nothing is resolved.
 *
 * `[registry[:port]/][path/]name[:tag][@algorithm:hex]`
 */

/** How many hex digits of a digest the summary keeps (as `docker images`). */
export const DIGEST_HEX_SHOWN = 12;

export interface ImageRef {
  /** Everything before the tag and digest, registry and path included. */
  repository: string;
  tag: string | undefined;
  digest: string | undefined;
}

/**
 * Splits a reference. The tag is a `:` after the last `/`, so a registry port
 * (`localhost:5000/app`) is not mistaken for one.
 */
export function parseImageRef(reference: string): ImageRef {
  let rest = reference;
  let digest: string | undefined;
  const at = rest.indexOf('@');
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(':');
  if (colon > rest.lastIndexOf('/')) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
  }
  return { repository: rest, tag, digest };
}

/** The last path segment of the repository: `checkout-api`. */
export function imageName(ref: ImageRef): string {
  return ref.repository.slice(ref.repository.lastIndexOf('/') + 1);
}

/** `sha256:0123456789abcdef…` → `sha256:0123456789ab`. */
export function shortDigest(digest: string): string {
  const colon = digest.indexOf(':');
  const hex = colon < 0 ? digest : digest.slice(colon + 1);
  const algorithm = colon < 0 ? '' : digest.slice(0, colon + 1);
  return `${algorithm}${hex.slice(0, DIGEST_HEX_SHOWN)}`;
}

/**
 * The version part: `2.41.0`, `sha256:0123456789ab`,
 * `2.41.0@sha256:0123456789ab`, or `untagged` for a bare repository (which
 * Kubernetes pulls as `latest`, but the spec did not say so).
 */
export function imageVersion(ref: ImageRef): string {
  const digest = ref.digest === undefined ? undefined : shortDigest(ref.digest);
  if (ref.tag !== undefined && digest !== undefined) {
    return `${ref.tag}@${digest}`;
  }
  return ref.tag ?? digest ?? 'untagged';
}

/** The repository (in full, or only its last segment) plus tag and digest. */
export function formatImage(ref: ImageRef, repository: string): string {
  const tag = ref.tag === undefined ? '' : `:${ref.tag}`;
  const digest = ref.digest === undefined ? '' : `@${shortDigest(ref.digest)}`;
  return `${repository}${tag}${digest}`;
}
