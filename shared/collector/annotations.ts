/**
 * Annotations leave the cluster only after two passes (spec: Security):
 * the last-applied copy of the whole object is dropped, and every other
 * value goes through the key-aware secret detector of shared/sanitize (a
 * secret-named key hides its whole value, any other value is sanitized as
 * text). The same pass serves the inventory and the live manifest read, so
 * both hide the same things.
 */
import { sanitizeAnnotationValue } from '../sanitize/secrets.ts';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The annotations that may leave the cluster, in the order they came. */
export function safeAnnotations(annotations: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof annotations !== 'object' || annotations === null) return out;
  for (const [key, value] of Object.entries(annotations)) {
    if (key === LAST_APPLIED || typeof value !== 'string') continue;
    out[key] = sanitizeAnnotationValue(key, value);
  }
  return out;
}
