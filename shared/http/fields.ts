/**
 * The one set of query-parameter fields: every route's parameters are built
 * from these zod fields, one per rule, so a namespace, a kind, a UUID, a
 * time or a number is checked the same way on every route. Paging is
 * `pagingFields` (shared/http/paging.ts); search text is `searchText`
 * (shared/http/search.ts); query.ts reads them.
 *
 * A message names the parameter and the rule, never the value: a value may
 * be anything a caller sends (a NUL, an RTL override, SQL), and an error
 * body that quotes it hands that text to whoever displays the error. Each
 * field takes the parameter's name, which its message starts with.
 *
 * A field accepts the value as received (a string); an empty value is
 * refused unless the field is wrapped in {@link blankAsAbsent}, which the
 * inventory lists use for their filters (the spec's lists take an empty
 * filter as none, while the newer routes refuse an empty parameter).
 */
import { InvalidParamError } from '../errors.ts';
import {
  DNS_1123_LABEL,
  DNS_1123_SUBDOMAIN,
  isUuid,
  KIND_NAME,
  LABEL_NAME,
  RFC_3339,
} from '../patterns.ts';
import * as z from '../zod.ts';

/**
 * `field`, its rule said once more where a reader looks for it: the
 * description of its JSON Schema, which the API reference (docs/api.md,
 * docs/openapi.json) shows beside the parameter. The rule's text is the
 * one its 400 says.
 */
export function withRule<T extends z.ZodMiniType>(field: T, rule: string): T {
  z.globalRegistry.add(field, { description: rule });
  return field;
}

/** A value matching `re`; the message says `name must be <rule>`. */
export const patternField = (name: string, re: RegExp, rule: string) =>
  withRule(
    z.string().check(z.refine((v) => re.test(v), `${name} must be ${rule}`)),
    rule,
  );

export const uuidField = (name: string) =>
  withRule(
    z.string().check(z.refine(isUuid, `${name} must be a UUID`)),
    'a UUID',
  );

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
export const oneOfField = <const T extends string>(
  name: string,
  allowed: readonly T[],
) => {
  const rule = `one of ${allowed.join(', ')}`;
  return withRule(
    z.enum(allowed as readonly [T, ...T[]], {
      error: `${name} must be ${rule}`,
    }),
    rule,
  );
};

/** `true` or `false`, as a boolean. */
export const booleanField = (name: string) =>
  z.pipe(
    z.enum(['true', 'false'], { error: `${name} must be true or false` }),
    z.transform((v) => v === 'true'),
  );

/**
 * An integer from `min` to `max` in decimal digits (no sign, no more digits
 * than `max` has).
 */
export const integerField = (name: string, min: number, max: number) => {
  const digits = new RegExp(`^[0-9]{1,${String(max).length}}$`);
  const rule = `an integer from ${min} to ${max}`;
  return withRule(
    z.pipe(
      z
        .string()
        .check(
          z.refine(
            (v) => digits.test(v) && Number(v) >= min && Number(v) <= max,
            `${name} must be ${rule}`,
          ),
        ),
      z.transform(Number),
    ),
    rule,
  );
};

const NS_PER_MS = 1_000_000n;
const LAST_NS_OF_SECOND = 999_999_999n;

/**
 * An RFC 3339 time with an offset as nanoseconds since the epoch; undefined
 * if it is not one (hour 24 included: RFC 3339 hours are 00–23), names a
 * day that does not exist, or has more than nine fractional digits.
 *
 * A leap second (second 60, which RFC 3339 allows) reads as the last
 * instant of that minute's second 59 (hh:mm:59.999999999), whatever its
 * fraction: the epoch counts no leap seconds, so this is the latest time
 * before the next minute, and it keeps the order of the times around it.
 * Second 60 is taken at any minute, as RFC 3339 lets a reader do without a
 * leap-second table (and with an offset a leap second falls on any minute).
 */
export function parseNanoTime(text: string): bigint | undefined {
  const match = RFC_3339.exec(text);
  if (!match) return undefined;
  const [, seconds = '', fraction = '', zone = ''] = match;
  if (fraction.length > 9) return undefined;
  const leap = seconds.endsWith(':60');
  const second59 = leap ? `${seconds.slice(0, -2)}59` : seconds;
  const ms = Date.parse(`${second59.toUpperCase()}${zone.toUpperCase()}`);
  if (Number.isNaN(ms)) return undefined;
  // Date.parse rolls 2026-02-30 over to March: refuse what it changed.
  const day = seconds.slice(0, 10);
  if (new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
    return undefined;
  }
  return (
    BigInt(ms) * NS_PER_MS +
    (leap ? LAST_NS_OF_SECOND : BigInt(fraction.padEnd(9, '0')))
  );
}

/** The millisecond a nanosecond time falls in (floored, before 1970 too). */
function msOfNanoTime(ns: bigint): bigint {
  const ms = ns / NS_PER_MS;
  return ns % NS_PER_MS < 0n ? ms - 1n : ms;
}

/** Nanoseconds since the epoch as a Date: the millisecond it falls in. */
function dateOfNanoTime(ns: bigint): Date {
  return new Date(Number(msOfNanoTime(ns)));
}

/** Nanoseconds as RFC 3339 in UTC, the fraction as long as it needs. */
export function formatNanoTime(ns: bigint): string {
  const whole = dateOfNanoTime(ns).toISOString().slice(0, 19);
  const fraction = (((ns % 1_000_000_000n) + 1_000_000_000n) % 1_000_000_000n)
    .toString()
    .padStart(9, '0')
    .replace(/0+$/, '');
  return `${whole}${fraction === '' ? '' : `.${fraction}`}Z`;
}

const RFC_3339_RULE = 'an RFC 3339 time';
const rfc3339Rule = (name: string) => `${name} must be ${RFC_3339_RULE}`;

/** An RFC 3339 time with an offset, as nanoseconds since the epoch. */
export const nanoTimeField = (name: string) =>
  withRule(
    z.pipe(
      z.string(),
      z.transform((v, ctx) => {
        const ns = parseNanoTime(v);
        if (ns === undefined) {
          ctx.issues.push({
            code: 'custom',
            message: rfc3339Rule(name),
            input: v,
          });
          return z.NEVER;
        }
        return ns;
      }),
    ),
    RFC_3339_RULE,
  );

/**
 * An RFC 3339 time with an offset, as a Date (millisecond precision, the
 * millisecond the time falls in): read by parseNanoTime, so a leap second
 * is hh:mm:59.999.
 */
export const timeField = (name: string) =>
  withRule(
    z.pipe(
      z
        .string()
        .check(
          z.refine((v) => parseNanoTime(v) !== undefined, rfc3339Rule(name)),
        ),
      z.transform((v) => dateOfNanoTime(parseNanoTime(v) as bigint)),
    ),
    RFC_3339_RULE,
  );

/** `field`, with an empty value taken as the parameter's absence. */
export function blankAsAbsent<T>(field: z.ZodMiniType<T, string>) {
  const rule = z.globalRegistry.get(field)?.description;
  const blank = z.pipe(
    z.pipe(
      z.string(),
      z.transform((v) => (v === '' ? undefined : v)),
    ),
    z.optional(field),
  );
  return rule === undefined ? blank : withRule(blank, `${rule}; empty is none`);
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
 * The 400 names the term at fault by its position (never its text). Empty
 * is no selector.
 */
export const labelSelectorField = (name = 'labels') =>
  withRule(
    z.pipe(
      z.string(),
      z.transform((raw, ctx): LabelSelector | undefined => {
        if (raw === '') return undefined;
        const selector: LabelSelector = {
          equals: Object.create(null),
          present: [],
        };
        const seen = new Set<string>();
        const refuse = (position: number, rule: string) => {
          ctx.issues.push({
            code: 'custom',
            message: `${name}: term ${position} ${rule}`,
            input: raw,
          });
          return z.NEVER;
        };
        for (const [index, term] of raw.split(',').entries()) {
          const equals = term.indexOf('=');
          const key = equals === -1 ? term : term.slice(0, equals);
          if (!isLabelKey(key)) {
            return refuse(
              index + 1,
              'has no label key ([prefix/]name, the name at most 63 letters, digits, -, _ or .)',
            );
          }
          if (seen.has(key)) return refuse(index + 1, 'repeats a key');
          seen.add(key);
          if (equals === -1) {
            selector.present.push(key);
            continue;
          }
          if (!isLabelValue(term.slice(equals + 1))) {
            return refuse(
              index + 1,
              'has no label value (at most 63 letters, digits, -, _ or .)',
            );
          }
          selector.equals[key] = term.slice(equals + 1);
        }
        return selector;
      }),
    ),
    'comma-separated `key=value` (the label holds the value) or `key` (the label is present) terms; empty is none',
  );

/** A sort: a key and its direction. */
export interface SortSpec {
  /** A key of the list's allow-list. */
  key: string;
  descending: boolean;
}

/** The 400 for a sort key outside the list's allow-list, naming the keys. */
export function unknownSortKeyError(
  allowedKeys: readonly string[],
): InvalidParamError {
  return new InvalidParamError(`sort must be ${sortRule(allowedKeys)}`, {
    details: { param: 'sort', allowed: [...allowedKeys] },
  });
}

const sortRule = (allowedKeys: readonly string[]) =>
  `one of ${allowedKeys.join(', ')}, optionally prefixed with - for descending`;

/**
 * sort: one key of `allowedKeys`, optionally prefixed with `-`; empty is
 * the list's usual order.
 */
export function sortField(allowedKeys: readonly string[]) {
  return withRule(
    z.pipe(
      z.string(),
      z.transform((raw, ctx): SortSpec | undefined => {
        if (raw === '') return undefined;
        const descending = raw.startsWith('-');
        const key = descending ? raw.slice(1) : raw;
        if (allowedKeys.includes(key)) return { key, descending };
        ctx.issues.push({
          code: 'custom',
          message: unknownSortKeyError(allowedKeys).message,
          params: { allowed: [...allowedKeys] },
          input: raw,
        });
        return z.NEVER;
      }),
    ),
    `${sortRule(allowedKeys)}; empty is the usual order`,
  );
}
