/**
 * The query parameters of the inventory lists (spec: "Search and sort on the
 * resource lists"), parsed and checked without touching the database.
 *
 * Every function here runs inside the domain functions, which the handler
 * calls only after the cluster access checks, so a caller who cannot see the
 * cluster gets 404 and never a 400 that would confirm it exists.
 *
 * Where the values come from: API Gateway's HTTP API (payload 2.0) joins a
 * repeated parameter with commas in `queryStringParameters`
 * (`?sort=name&sort=age` arrives as `"name,age"`), so a repeat could not be
 * told from a value with a comma. Handlers pass `event.rawQueryString`
 * through {@link parseQueryString} instead, which keeps every occurrence.
 */
import { InvalidParamError, ValidationError } from '../errors.ts';
import { DNS_1123_LABEL, KIND_NAME } from '../http/patterns.ts';
import { CONTROL_CHARACTER, SEARCH_MAX_LENGTH } from '../http/search.ts';

/**
 * Query parameters by name. A value is a string, or every occurrence of a
 * repeated parameter in order (`{ sort: ['name', 'age'] }`).
 */
export type QueryParams = Readonly<
  Record<string, string | readonly string[] | undefined>
>;

export const DEFAULT_PAGE = 1;
/** Pages past this are refused (400) rather than scanned. */
export const MAX_PAGE = 1_000_000;
export const DEFAULT_PER_PAGE = 50;
/**
 * per_page above this is clamped to it (as List Clusters clamps its own
 * maximum) and the clamped value is echoed in meta.per_page.
 */
export const MAX_PER_PAGE = 500;

/**
 * Splits a raw query string (API Gateway's `rawQueryString`, without the
 * leading `?`) into every occurrence of every parameter.
 *
 * Decoding follows the WHATWG URL standard (`URLSearchParams`): `+` is a
 * space, `%XX` escapes are bytes, and the bytes are decoded as UTF-8 with
 * every invalid sequence (a stray `%FF`, an encoded lone surrogate such as
 * `%ED%A0%80`) replaced by U+FFFD. That is how invalid UTF-8 reaches the
 * checks: {@link parseSearch} refuses a U+FFFD (and a lone surrogate, for a
 * caller that built the string some other way) as invalid UTF-8.
 */
export function parseQueryString(
  raw: string | null | undefined,
): Record<string, string[]> {
  const params: Record<string, string[]> = Object.create(null);
  if (!raw) return params;
  for (const [name, value] of new URLSearchParams(raw)) {
    const values = params[name];
    if (values) values.push(value);
    else params[name] = [value];
  }
  return params;
}

type ParamErrorClass = typeof ValidationError | typeof InvalidParamError;

/**
 * The one value of a parameter, or undefined when absent. A repeated
 * parameter is ambiguous, so it is refused rather than one value picked.
 */
function readOnce(
  params: QueryParams,
  name: string,
  ErrorClass: ParamErrorClass,
): string | undefined {
  if (!Object.hasOwn(params, name)) return undefined;
  const value = params[name];
  if (value === undefined || typeof value === 'string') return value;
  if (value.length > 1) {
    throw new ErrorClass(`${name} may appear only once`, {
      details: { param: name, reason: 'repeated' },
    });
  }
  return value[0];
}

/** Reads a parameter that is not q or sort (errors are 400 bad_request). */
export function readParam(
  params: QueryParams,
  name: string,
): string | undefined {
  return readOnce(params, name, ValidationError);
}

const REPLACEMENT_CHARACTER = '\uFFFD';
const LONE_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function searchError(message: string, reason: string): InvalidParamError {
  return new InvalidParamError(message, { details: { param: 'q', reason } });
}

/**
 * The search term, or undefined for none (absent, or blank once trimmed).
 *
 * Checked in this order, on the value as received: invalid UTF-8 (a U+FFFD
 * or a lone surrogate: no Kubernetes name or namespace contains either),
 * then any control character (a tab or newline included, even at an end
 * that trimming would remove), then the length after trimming.
 */
export function parseSearch(params: QueryParams): string | undefined {
  const raw = readOnce(params, 'q', InvalidParamError);
  if (raw === undefined) return undefined;
  if (raw.includes(REPLACEMENT_CHARACTER) || LONE_SURROGATE.test(raw)) {
    throw searchError('q is not valid UTF-8', 'invalid_utf8');
  }
  if (CONTROL_CHARACTER.test(raw)) {
    throw searchError('q contains a control character', 'control_character');
  }
  const term = raw.trim();
  // Counted in characters (code points), after trimming.
  if ([...term].length > SEARCH_MAX_LENGTH) {
    throw searchError(
      `q is longer than ${SEARCH_MAX_LENGTH} characters`,
      'too_long',
    );
  }
  return term === '' ? undefined : term;
}

export interface SortSpec {
  /** A key of the list's allow-list. */
  key: string;
  descending: boolean;
}

/**
 * The requested sort, or undefined for the list's usual order (absent or
 * empty). One key of `allowedKeys`, optionally prefixed with `-`.
 */
export function parseSort(
  params: QueryParams,
  allowedKeys: readonly string[],
): SortSpec | undefined {
  const raw = readOnce(params, 'sort', InvalidParamError);
  if (raw === undefined || raw === '') return undefined;
  const descending = raw.startsWith('-');
  const key = descending ? raw.slice(1) : raw;
  if (!allowedKeys.includes(key)) throw unknownSortKeyError(allowedKeys);
  return { key, descending };
}

/** The 400 for a sort key outside the list's allow-list, naming the keys. */
export function unknownSortKeyError(
  allowedKeys: readonly string[],
): InvalidParamError {
  return new InvalidParamError(
    `sort must be one of ${allowedKeys.join(', ')}, optionally prefixed with - for descending`,
    { details: { param: 'sort', allowed: [...allowedKeys] } },
  );
}

export interface Paging {
  page: number;
  perPage: number;
  offset: number;
}

const DIGITS = /^[0-9]+$/;

function parseCount(
  params: QueryParams,
  name: string,
  fallback: number,
): number {
  const raw = readParam(params, name);
  if (raw === undefined || raw === '') return fallback;
  const value = DIGITS.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new ValidationError(`${name} must be a positive integer`, {
      details: { param: name },
    });
  }
  return value;
}

/** page (default 1, at most MAX_PAGE) and per_page (default 50, clamped). */
export function parsePaging(params: QueryParams): Paging {
  const page = parseCount(params, 'page', DEFAULT_PAGE);
  if (page > MAX_PAGE) {
    throw new ValidationError(`page must be at most ${MAX_PAGE}`, {
      details: { param: 'page' },
    });
  }
  const perPage = Math.min(
    parseCount(params, 'per_page', DEFAULT_PER_PAGE),
    MAX_PER_PAGE,
  );
  return { page, perPage, offset: (page - 1) * perPage };
}

/** Checks one filter value; returns it as the store compares it. */
export type FilterRule = (value: string, param: string) => string;

function filterError(param: string, rule: string): ValidationError {
  return new ValidationError(`${param} must be ${rule}`, {
    details: { param },
  });
}

/** A namespace name: a DNS-1123 label. */
export const dnsLabel: FilterRule = (value, param) => {
  if (!DNS_1123_LABEL.test(value)) throw filterError(param, 'a DNS-1123 label');
  return value;
};

/** A Kubernetes kind: an upper-case letter, then up to 62 letters or digits. */
export const kindName: FilterRule = (value, param) => {
  if (!KIND_NAME.test(value)) {
    throw filterError(
      param,
      'an upper-case letter followed by at most 62 letters or digits',
    );
  }
  return value;
};

/** One of a fixed set of values, compared exactly. */
export function oneOf(allowed: readonly string[]): FilterRule {
  return (value, param) => {
    if (!allowed.includes(value)) {
      throw filterError(param, `one of ${allowed.join(', ')}`);
    }
    return value;
  };
}
