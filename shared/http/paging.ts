/**
 * `page` and `per_page` for the paged lists: positive integers, `page`
 * defaulting to 1, `per_page` to the route's default; a `per_page` above the
 * route's maximum is clamped to it (the clusters list's rule), not refused.
 * The meta every paged list returns is `{total, page, per_page}` with the
 * per_page actually used.
 */
import { z } from 'zod';

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

/** Bounds `page` so the offset stays well inside a bigint. */
const MAX_PAGE = 2_147_483_647;

const positiveInt = (name: string, max: number) =>
  z
    .string()
    .regex(/^\d{1,10}$/, `${name} must be a positive integer`)
    .transform(Number)
    .refine((n) => n >= 1 && n <= max, `${name} must be a positive integer`);

/** zod fields for a paged list; spread them into the route's query schema. */
export function pagingFields(maxPerPage: number) {
  return {
    page: positiveInt('page', MAX_PAGE).optional(),
    per_page: positiveInt('per_page', MAX_PAGE)
      .transform((n) => Math.min(n, maxPerPage))
      .optional(),
  } as const;
}

/** The paging a parsed query asks for, defaults applied. */
export function pagingOf(
  query: { page?: number | undefined; per_page?: number | undefined },
  defaultPerPage: number,
): Paging {
  return { page: query.page ?? 1, perPage: query.per_page ?? defaultPerPage };
}

export function offsetOf(paging: Paging): number {
  return (paging.page - 1) * paging.perPage;
}

export function pageMeta(total: number, paging: Paging): PageMeta {
  return { total, page: paging.page, per_page: paging.perPage };
}
