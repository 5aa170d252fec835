/**
 * The query parameters of the inventory lists (spec: "Search and sort on the
 * resource lists"), as zod fields that each list's schema is built from
 * (shared/inventory/list.ts, listQuery), checked without touching the
 * database.
 *
 * They are read only after the cluster access checks (the route's query is
 * read by apiHandler once those passed), so a caller who cannot see the
 * cluster gets 404 and never a 400 that would confirm it exists.
 */
import { z } from 'zod';
import { InvalidParamError, ValidationError } from '../errors.ts';
import {
  blankAsAbsent,
  kindField,
  namespaceField,
  oneOfField,
} from '../http/fields.ts';
import {
  offsetOf,
  type Paging as PageRequest,
  pagingFields,
  pagingOf,
} from '../http/paging.ts';
import {
  type QueryParams,
  type RouteQuery,
  readParams,
  readValue,
} from '../http/query.ts';
import { searchText } from '../http/search.ts';

export const DEFAULT_PER_PAGE = 50;
/**
 * per_page above this is clamped to it (as List Clusters clamps its own
 * maximum) and the clamped value is echoed in meta.per_page.
 */
export const MAX_PER_PAGE = 500;

/** The lists' q and sort: their errors are 400 invalid_param. */
export const SEARCH_AND_SORT = ['q', 'sort'] as const;

/** Reads a parameter that is not q or sort (errors are 400 bad_request). */
export function readParam(
  params: QueryParams,
  name: string,
): string | undefined {
  return readValue(params, name, ValidationError);
}

/**
 * q: checked in this order, on the value as received: repeated, invalid
 * UTF-8 (a U+FFFD or a lone surrogate: no Kubernetes name or namespace
 * contains either; the reader refuses both), then checkSearchText's rules:
 * any control character (a tab or newline included, even at an end that
 * trimming would remove), then the length after trimming. Each is a 400
 * invalid_param saying which. Blank is no search.
 */
export const searchField = searchText('q', { withReason: true });

export interface SortSpec {
  /** A key of the list's allow-list. */
  key: string;
  descending: boolean;
}

/**
 * sort: one key of `allowedKeys`, optionally prefixed with `-`; empty is
 * the list's usual order.
 */
export function sortField(allowedKeys: readonly string[]) {
  return z.string().transform((raw, ctx): SortSpec | undefined => {
    if (raw === '') return undefined;
    const descending = raw.startsWith('-');
    const key = descending ? raw.slice(1) : raw;
    if (allowedKeys.includes(key)) return { key, descending };
    const error = unknownSortKeyError(allowedKeys);
    ctx.addIssue({
      code: 'custom',
      message: error.message,
      params: { allowed: [...allowedKeys] },
    });
    return z.NEVER;
  });
}

function readOne<T>(params: QueryParams, name: string, field: z.ZodType<T>) {
  const spec = {
    schema: z.object({ [name]: field.optional() }),
    unknownParam: 'invalid_param',
    invalidParam: SEARCH_AND_SORT,
  } as const satisfies RouteQuery;
  return (readParams(params, spec) as Record<string, T | undefined>)[name];
}

/** The search term, or undefined for none (absent, or blank once trimmed). */
export function parseSearch(params: QueryParams): string | undefined {
  return readOne(params, 'q', searchField);
}

/** The requested sort, or undefined for the list's usual order. */
export function parseSort(
  params: QueryParams,
  allowedKeys: readonly string[],
): SortSpec | undefined {
  return readOne(params, 'sort', sortField(allowedKeys));
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

/** page (default 1, at most MAX_PAGE) and per_page (default 50, clamped). */
export const listPagingFields = pagingFields(MAX_PER_PAGE);

/** The paging a list's parsed page and per_page ask for, with its offset. */
export function listPagingOf(query: {
  page?: number | undefined;
  per_page?: number | undefined;
}): Paging {
  const paging = pagingOf(query, DEFAULT_PER_PAGE);
  return { ...paging, offset: offsetOf(paging) };
}

const PAGING_QUERY = {
  schema: z.object(listPagingFields),
  unknownParam: 'invalid_param',
} as const satisfies RouteQuery;

export function parsePaging(params: QueryParams): Paging {
  return listPagingOf(readParams(params, PAGING_QUERY));
}

/**
 * A list filter's value rule: a zod field over the value as received (an
 * empty value is no filter), given the parameter's name.
 */
export type FilterField = (
  param: string,
) => z.ZodType<string | undefined, string>;

export const namespaceFilter: FilterField = (param) =>
  blankAsAbsent(namespaceField(param));

export const kindFilter: FilterField = (param) =>
  blankAsAbsent(kindField(param));

export const oneOfFilter =
  (allowed: readonly string[]): FilterField =>
  (param) =>
    blankAsAbsent(oneOfField(param, allowed));

/** Checks one filter value; returns it as the store compares it. */
export type FilterRule = (value: string, param: string) => string;

/** A filter field as a function that returns the value or throws the 400. */
function ruleOf(
  field: (param: string) => z.ZodType<unknown, string>,
): FilterRule {
  return (value, param) => {
    const result = field(param).safeParse(value);
    if (result.success) return value;
    throw new ValidationError(result.error.issues[0]?.message ?? param, {
      details: { param },
    });
  };
}

/** A namespace name: a DNS-1123 label. */
export const dnsLabel: FilterRule = ruleOf(namespaceField);

/** A Kubernetes kind: an upper-case letter, then up to 62 letters or digits. */
export const kindName: FilterRule = ruleOf(kindField);

/** One of a fixed set of values, compared exactly. */
export function oneOf(allowed: readonly string[]): FilterRule {
  return ruleOf((param) => oneOfField(param, allowed));
}
