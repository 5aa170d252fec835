/**
 * The hosts routes' glue: the route table gated them on assets:read and
 * passed the caller's scope (an environment grant covers that environment's
 * hosts only, a client-wide grant the client's). Their parameters:
 * params.ts.
 */
import type { ApiRequest } from '../http/api-handler.ts';
import type { RouteNamed } from '../http/routes.ts';
import { getHost, type HostRecord, listHosts } from './repo.ts';

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
