/**
 * The host list's query parameters: a PQL expression and paging (default 20
 * per page, larger than 100 clamped to 100); an unknown parameter is 400
 * bad_request.
 */

import { withRule } from '../http/fields.ts';
import { type PagingRule, pagingFields, pagingOf } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import * as z from '../zod.ts';

export const HOSTS_PAGING: PagingRule = { defaultPerPage: 20, maxPerPage: 100 };

/**
 * `pql` is read as text here; its grammar is checked by the parser
 * (400 invalid_pql naming the position), after the access checks.
 */
export const hostListQuery = {
  schema: z.pipe(
    z.object({
      pql: z.optional(
        withRule(
          z.string(),
          'a PQL expression over host and `cluster.*` fields (docs/relations.md); checked after the access checks (400 invalid_pql)',
        ),
      ),
      ...pagingFields(HOSTS_PAGING),
    }),
    z.transform((query) => ({
      pql: query.pql,
      paging: pagingOf(query, HOSTS_PAGING),
    })),
  ),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;
