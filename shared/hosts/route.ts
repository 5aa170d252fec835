/**
 * The hosts routes' parameters and glue: the route table gated them on
 * assets:read and passed the caller's scope (an environment grant covers
 * that environment's hosts only, a client-wide grant the client's).
 */
import * as z from 'zod';
import type { ApiRequest } from '../http/api-handler.ts';
import { pagingFields, pagingOf } from '../http/paging.ts';
import type { RouteQuery } from '../http/query.ts';
import type { RouteNamed } from '../http/routes.ts';
import { getHost, type HostRecord, listHosts } from './repo.ts';

export const HOSTS_DEFAULT_PER_PAGE = 20;
export const HOSTS_MAX_PER_PAGE = 100;

/**
 * `pql` is read as text here; its grammar is checked by the parser
 * (400 invalid_pql naming the position), after the access checks.
 */
export const hostListQuery = {
  schema: z
    .object({
      pql: z.string().optional(),
      ...pagingFields(HOSTS_MAX_PER_PAGE),
    })
    .transform((query) => ({
      pql: query.pql,
      paging: pagingOf(query, HOSTS_DEFAULT_PER_PAGE),
    })),
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export function serveHostList(
  request: ApiRequest<RouteNamed<'list-hosts'>>,
): ReturnType<typeof listHosts> {
  return listHosts(request.db, request.scope, request.query);
}

export function serveHost(
  request: ApiRequest<RouteNamed<'get-host'>>,
): Promise<HostRecord> {
  return getHost(
    request.db,
    request.scope,
    request.event.pathParameters?.hostID,
  );
}
