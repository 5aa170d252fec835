/**
 * Annotations leave the cluster only after two passes (spec: Security):
 * the last-applied copy of the whole object is dropped, and every other
 * value goes through the key-aware secret detector. The same pass serves
 * the inventory and the live manifest read, so both hide the same things.
 *
 * Key-aware: an annotation whose name (the part after the `/` prefix) is a
 * secret word by the sanitizer's key rules (`db-password`, `apiToken`) has
 * its whole value replaced, however many lines it has, unless the sanitizer
 * keeps it as an obvious non-secret (`token: 5`). Any other value is
 * sanitized as text, so a credential inside a URL or a JSON blob is caught.
 * Only the sanitizer's public function is used: its rules are the rules.
 */
import { REDACTED, sanitizeSecrets } from '../sanitize/secrets.ts';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * Longer values are hidden whole instead of scanned: the sanitizer's pair
 * rules cost time that grows with the square of a run of word characters
 * (a 16 KiB value takes seconds), and one operator's JSON blob must not
 * stall a sync. Hiding is the safe failure; the length stays visible.
 */
export const ANNOTATION_SCAN_MAX = 4096;

/** A value the sanitizer cannot call harmless, to ask whether a key is secret. */
const PROBE = 'q7Zp3Xw9Lk2';

function annotationName(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash === -1 ? key : key.slice(slash + 1);
}

function hasSecretName(name: string): boolean {
  const probe = `${name}: ${PROBE}`;
  return sanitizeSecrets(probe) !== probe;
}

/** One annotation's value as it may leave the cluster. */
export function sanitizeAnnotationValue(key: string, value: string): string {
  if (value.length > ANNOTATION_SCAN_MAX) {
    return `${REDACTED} (${value.length} characters, too long to scan)`;
  }
  const name = annotationName(key);
  if (name !== '' && hasSecretName(name)) {
    if (value === '') return value;
    if (!value.includes('\n')) {
      const line = `${name}: ${value}`;
      if (sanitizeSecrets(line) === line) return value;
    }
    return REDACTED;
  }
  return sanitizeSecrets(value);
}

/**
 * The annotations that may leave the cluster: last-applied dropped, every
 * value sanitized by key. Keys are kept in their sorted order, so the same
 * object always serializes to the same bytes.
 */
export function safeAnnotations(annotations: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (typeof annotations !== 'object' || annotations === null) return out;
  const entries = Object.entries(annotations as Record<string, unknown>);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  for (const [key, value] of entries) {
    if (key === LAST_APPLIED || typeof value !== 'string') continue;
    out[key] = sanitizeAnnotationValue(key, value);
  }
  return out;
}
