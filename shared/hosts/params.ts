/**
 * The host list's query parameters: a PQL expression and paging (default 20
 * per page, larger than 100 clamped to 100); an unknown parameter is 400
 * bad_request.
 */

import { pagingFields, pagingOf } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';

export const HOSTS_DEFAULT_PER_PAGE = 20;
export const HOSTS_MAX_PER_PAGE = 100;

/**
 * `pql` is read as text here; its grammar is checked by the parser
 * (400 invalid_pql naming the position), after the access checks.
 */
export const hostListQuery = {
  schema: z.pipe(
    z.object({
      pql: z.optional(z.string()),
      ...pagingFields(HOSTS_MAX_PER_PAGE),
    }),
    z.transform((query) => ({
      pql: query.pql,
      paging: pagingOf(query, HOSTS_DEFAULT_PER_PAGE),
    })),
  ),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
