/**
 * `page` and `per_page` for every paged list: positive integers, `page`
 * defaulting to 1 (at most MAX_PAGE), `per_page` to the list's default; a
 * `per_page` above the list's maximum is clamped to it (the clusters
 * list's rule), not refused. An empty value is the default. A list's
 * default and maximum are one PagingRule, which both its fields (and so
 * the API reference) and pagingOf read.
 * The meta every paged list returns is `{total, page, per_page}` with the
 * per_page actually used.
 */

import * as z from '../zod.ts';
import { withRule } from './fields.ts';

/** A paged list's `per_page`: its default and its maximum. */
export interface PagingRule {
  defaultPerPage: number;
  maxPerPage: number;
}

export interface Paging {
  page: number;
  perPage: number;
}

export interface PageMeta {
  total: number;
  page: number;
  per_page: number;
  [key: string]: unknown;
}

/** Pages past this are refused (400) rather than scanned. */
export const MAX_PAGE = 1_000_000;

const DIGITS = /^[0-9]+$/;

/** A positive integer in decimal digits; an empty value counts as absent. */
const positiveInt = (name: string) =>
  z.pipe(
    z
      .string()
      .check(
        z.refine(
          (v) => v === '' || (DIGITS.test(v) && Number(v) >= 1),
          `${name} must be a positive integer`,
        ),
      ),
    z.transform((v) => (v === '' ? undefined : Number(v))),
  );

/**
 * zod fields for a paged list; spread them into the route's query schema.
 * A per_page above the rule's maximum, however large, is clamped to it.
 */
export function pagingFields({ defaultPerPage, maxPerPage }: PagingRule) {
  return {
    page: z.optional(
      withRule(
        positiveInt('page').check(
          z.refine(
            (n) => n === undefined || n <= MAX_PAGE,
            `page must be at most ${MAX_PAGE}`,
          ),
        ),
        `a positive integer, at most ${MAX_PAGE}; 1 when absent or empty`,
      ),
    ),
    per_page: z.optional(
      withRule(
        z.pipe(
          positiveInt('per_page'),
          z.transform((n) =>
            n === undefined ? undefined : Math.min(n, maxPerPage),
          ),
        ),
        `a positive integer; above ${maxPerPage} reads as ${maxPerPage} (meta.per_page says so); ${defaultPerPage} when absent or empty`,
      ),
    ),
  } as const;
}

/** The paging a parsed query asks for, the rule's defaults applied. */
export function pagingOf(
  query: { page?: number | undefined; per_page?: number | undefined },
  { defaultPerPage }: PagingRule,
): Paging {
  return { page: query.page ?? 1, perPage: query.per_page ?? defaultPerPage };
}

export function offsetOf(paging: Paging): number {
  return (paging.page - 1) * paging.perPage;
}

export function pageMeta(total: number, paging: Paging): PageMeta {
  return { total, page: paging.page, per_page: paging.perPage };
}
