/**
 * The zod field schemas query parameters are built from, one per rule, so a
 * namespace, a kind, a UUID or a time is checked the same way on every
 * route. Each takes the parameter's name, which its message starts with.
 * Paging is `pagingFields` (shared/http/paging.ts); search text is
 * `searchText` (shared/http/search.ts).
 *
 * A field accepts the value as received (a string); an empty value is
 * refused unless the field is wrapped in {@link blankAsAbsent}, which the
 * inventory lists use for their filters (the spec's lists take an empty
 * filter as none, while the newer routes refuse an empty parameter).
 */
import { z } from 'zod';
import { isUuid } from './ids.ts';
import { DNS_1123_LABEL, DNS_1123_SUBDOMAIN, KIND_NAME } from './patterns.ts';

/** A value matching `re`; the message says `name must be <rule>`. */
export const patternField = (name: string, re: RegExp, rule: string) =>
  z.string().refine((v) => re.test(v), `${name} must be ${rule}`);

export const uuidField = (name: string) =>
  z.string().refine(isUuid, `${name} must be a UUID`);

/** A namespace (or container) name: a DNS-1123 label. */
export const namespaceField = (name = 'namespace') =>
  patternField(name, DNS_1123_LABEL, 'a DNS-1123 label');

/** An object name: a DNS-1123 subdomain. */
export const objectNameField = (name: string) =>
  patternField(name, DNS_1123_SUBDOMAIN, 'a DNS-1123 subdomain');

/** A Kubernetes kind: an upper-case letter, then up to 62 letters or digits. */
export const kindField = (name = 'kind') =>
  patternField(
    name,
    KIND_NAME,
    'an upper-case letter followed by at most 62 letters or digits',
  );

/** One of a fixed set of values, compared exactly. */
export const oneOfField = (name: string, allowed: readonly string[]) =>
  z
    .string()
    .refine(
      (v) => allowed.includes(v),
      `${name} must be one of ${allowed.join(', ')}`,
    );

const RFC_3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time with an offset, as a Date. */
export const timeField = (name: string) =>
  z
    .string()
    .refine(
      (v) => RFC_3339.test(v) && !Number.isNaN(Date.parse(v)),
      `${name} must be an RFC 3339 time`,
    )
    .transform((v) => new Date(v));

/** `field`, with an empty value taken as the parameter's absence. */
export function blankAsAbsent<T>(field: z.ZodType<T, string>) {
  return z
    .string()
    .transform((v) => (v === '' ? undefined : v))
    .pipe(field.optional());
}
