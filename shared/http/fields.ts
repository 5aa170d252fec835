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
import {
  DNS_1123_LABEL,
  DNS_1123_SUBDOMAIN,
  KIND_NAME,
  LABEL_NAME,
} from './patterns.ts';

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

/**
 * A label selector, as `labels=key=value[,key2=value2]`; `key` alone
 * asks that the label be present, whatever its value.
 */
export interface LabelSelector {
  /** Labels that must hold exactly these values. */
  equals: Record<string, string>;
  /** Labels that must be present. */
  present: string[];
}

/** A Kubernetes label key: `[prefix/]name`, the prefix a DNS-1123 subdomain. */
export function isLabelKey(key: string): boolean {
  const slash = key.indexOf('/');
  if (slash === -1) return LABEL_NAME.test(key);
  const prefix = key.slice(0, slash);
  return (
    DNS_1123_SUBDOMAIN.test(prefix) && LABEL_NAME.test(key.slice(slash + 1))
  );
}

/** A Kubernetes label value: empty, or a label name's shape. */
export function isLabelValue(value: string): boolean {
  return value === '' || LABEL_NAME.test(value);
}

/**
 * `labels`: comma-separated `key=value` or `key` terms, each key a
 * Kubernetes label key and each value a label value; a key at most once.
 * The 400 names the term at fault. Empty is no selector.
 */
export const labelSelectorField = (name = 'labels') =>
  z.string().transform((raw, ctx): LabelSelector | undefined => {
    if (raw === '') return undefined;
    const selector: LabelSelector = {
      equals: Object.create(null),
      present: [],
    };
    const seen = new Set<string>();
    const refuse = (message: string) => {
      ctx.addIssue({ code: 'custom', message: `${name}: ${message}` });
      return z.NEVER;
    };
    for (const term of raw.split(',')) {
      const equals = term.indexOf('=');
      const key = equals === -1 ? term : term.slice(0, equals);
      if (!isLabelKey(key)) {
        return refuse(
          `${JSON.stringify(key.slice(0, 100))} is not a label key ([prefix/]name, the name at most 63 letters, digits, -, _ or .)`,
        );
      }
      if (seen.has(key)) return refuse(`${key} is named twice`);
      seen.add(key);
      if (equals === -1) {
        selector.present.push(key);
        continue;
      }
      const value = term.slice(equals + 1);
      if (!isLabelValue(value)) {
        return refuse(
          `${JSON.stringify(value.slice(0, 100))} is not a label value (at most 63 letters, digits, -, _ or .)`,
        );
      }
      selector.equals[key] = value;
    }
    return selector;
  });
