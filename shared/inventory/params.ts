/**
 * The query parameters of the inventory lists (spec: "Search and sort on the
 * resource lists"), parsed and checked without touching the database.
 *
 * Every function here runs inside the domain functions, which the handler
 * calls only after the cluster access checks, so a caller who cannot see the
 * cluster gets 404 and never a 400 that would confirm it exists.
 *
 * The values come from {@link parseQueryString} (shared/http/query.ts) of
 * `event.rawQueryString`, which keeps every occurrence of a parameter.
 */
import { z } from 'zod';
import { InvalidParamError, ValidationError } from '../errors.ts';
import {
  offsetOf,
  type Paging as PageRequest,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import { DNS_1123_LABEL, KIND_NAME } from '../http/patterns.ts';
import { type QueryParams, readValue, validateQuery } from '../http/query.ts';
import { checkSearchText } from '../http/search.ts';

export const DEFAULT_PER_PAGE = 50;
/**
 * per_page above this is clamped to it (as List Clusters clamps its own
 * maximum) and the clamped value is echoed in meta.per_page.
 */
export const MAX_PER_PAGE = 500;

/** Reads a parameter that is not q or sort (errors are 400 bad_request). */
export function readParam(
  params: QueryParams,
  name: string,
): string | undefined {
  return readValue(params, name, ValidationError);
}

/**
 * The search term, or undefined for none (absent, or blank once trimmed).
 *
 * Checked in this order, on the value as received: repeated, invalid UTF-8
 * (a U+FFFD or a lone surrogate: no Kubernetes name or namespace contains
 * either), then checkSearchText's rules: any control character (a tab or
 * newline included, even at an end that trimming would remove), then the
 * length after trimming. Each is a 400 invalid_param saying which.
 */
export function parseSearch(params: QueryParams): string | undefined {
  const raw = readValue(params, 'q', InvalidParamError);
  if (raw === undefined) return undefined;
  const checked = checkSearchText('q', raw);
  if ('term' in checked) return checked.term;
  throw new InvalidParamError(checked.message, {
    details: { param: 'q', reason: checked.problem },
  });
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
  const raw = readValue(params, 'sort', InvalidParamError);
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

export interface Paging extends PageRequest {
  offset: number;
}

const PAGING_SCHEMA = z.object(pagingFields(MAX_PER_PAGE));

/** page (default 1, at most MAX_PAGE) and per_page (default 50, clamped). */
export function parsePaging(params: QueryParams): Paging {
  const requested = validateQuery(PAGING_SCHEMA, {
    page: readParam(params, 'page'),
    per_page: readParam(params, 'per_page'),
  });
  const paging = pagingOf(requested, DEFAULT_PER_PAGE);
  return { ...paging, offset: offsetOf(paging) };
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
