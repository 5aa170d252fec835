/**
 * The middleware stack of every API function (`functions/api/<name>.ts`):
 * errors → authorize (by the route table entry's access) → query → handler.
 *
 * - authorize: unless the route is public, the verified JWT claims (AWS:
 *   the HTTP API's authorizer; locally: infra/local/api-server.ts) become an
 *   AccessContext with the caller's grants (no claims: 401); the route gate
 *   (RequireAnyPermissionInAnyScope on the entry's permissions, else 403);
 *   then the checks of the entry's access shape (shared/http/routes.ts):
 *   the cluster's 404/403, the client's 404/403, the scope of a list.
 * - query: the entry's query schema read by readRouteQuery, after those
 *   checks, so a 400 never confirms that something exists.
 *
 * The handler gets the checked cluster, scope and sources and the parsed
 * query; it returns `{ data, meta? }` (200) or a full result.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type {
  APIGatewayProxyEventV2WithJWTAuthorizer,
  Context,
} from 'aws-lambda';
import { AccessContext, EMPTY_SCOPE, type Scope } from '../auth/access.ts';
import { principalFromEvent } from '../auth/claims.ts';
import { type Grant, listGrants } from '../auth/grants.ts';
import { clientReadScope } from '../clusters/list.ts';
import { type ClusterRecord, findClusterWithGrants } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import { getDb } from '../db/process-pool.ts';
import { NotFoundError } from '../errors.ts';
import { checkClusterRead } from './cluster-access.ts';
import { httpErrors } from './error-middleware.ts';
import { isUuid } from './ids.ts';
import { type QueryOf, readRouteQuery } from './query.ts';
import { RateLimitCharge } from './rate-limit.ts';
import { type ApiResult, ok } from './response.ts';
import {
  permissionsOf,
  type RouteDefinition,
  type RouteName,
  type RouteNamed,
  routeNamed,
} from './routes.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;

/** The path parameter each access shape reads its object from. */
export const ACCESS_PATH_PARAMS = {
  cluster: 'clusterID',
  'client-clusters': 'id',
  'environment-clusters': 'envID',
} as const;

/** What a handler receives once the caller passed the route's checks. */
export interface ApiRequest<R extends RouteDefinition = RouteDefinition> {
  event: ApiEvent;
  /** The caller's grants (none on a public route). */
  access: AccessContext;
  db: Db;
  route: R;
  /** The route's query schema's output. */
  query: QueryOf<R['query']>;
  /** A cluster route's cluster, checked against the caller's grants. */
  cluster: R['access'] extends { shape: 'cluster' } ? ClusterRecord : undefined;
  /**
   * Where the route's permission holds (the cluster lists and gate routes;
   * inside the path's client on client-clusters); empty on other shapes.
   */
  scope: Scope;
  /** A sources route's sources the caller may read on this cluster. */
  sources: R['access'] extends { sources: infer S } ? (keyof S)[] : [];
  /**
   * The route's rate-limit count, already taken unless the handler was
   * declared to fold it into its first write (ApiHandlerOptions).
   */
  rateLimit: RateLimitCharge | undefined;
}

/** A handler's answer: 200 with `{data, meta?}`, or a full result. */
export type ApiReply = { data: unknown; meta?: object } | ApiResult;

export type ApiFunction<R extends RouteDefinition = RouteDefinition> = (
  request: ApiRequest<R>,
) => Promise<ApiReply>;

function isResult(reply: ApiReply): reply is ApiResult {
  return 'statusCode' in reply && !('data' in reply);
}

interface Authorized {
  access: AccessContext;
  db: Db;
  cluster: ClusterRecord | undefined;
  scope: Scope;
  sources: string[];
}

interface ApiContext extends Context {
  authorized?: Authorized;
}

const ANONYMOUS = new AccessContext({ sub: '', email: undefined }, []);

async function authorizeRequest(
  route: RouteDefinition,
  event: ApiEvent,
): Promise<Authorized> {
  const { access: routeAccess } = route;
  const db = await getDb({ applicationName: 'k8s-inventory-api' });
  const none = { db, cluster: undefined, scope: EMPTY_SCOPE, sources: [] };
  if (routeAccess.shape === 'public') return { ...none, access: ANONYMOUS };
  const principal = principalFromEvent(event);
  const path = event.pathParameters ?? {};
  // A cluster route's cluster is read in the same round trip as the grants.
  const clusterId =
    routeAccess.shape === 'cluster'
      ? path[ACCESS_PATH_PARAMS.cluster]
      : undefined;
  let grants: Grant[];
  let cluster: ClusterRecord | undefined;
  if (isUuid(clusterId)) {
    const found = await findClusterWithGrants(db, clusterId, principal.email);
    grants = found.grants;
    cluster = found.cluster ?? undefined;
  } else {
    grants = await listGrants(db, principal.email);
  }
  const access = new AccessContext(principal, grants);
  access.requireAnyPermissionInAnyScope(permissionsOf(routeAccess));
  const authorized = { ...none, access };
  switch (routeAccess.shape) {
    case 'cluster':
      return {
        ...authorized,
        ...checkClusterRead(access, cluster, routeAccess),
      };
    case 'client-clusters':
      return {
        ...authorized,
        scope: clientReadScope(
          access,
          path[ACCESS_PATH_PARAMS['client-clusters']],
          routeAccess.permission,
        ).scope,
      };
    case 'environment-clusters':
      if (!isUuid(path[ACCESS_PATH_PARAMS['environment-clusters']])) {
        throw new NotFoundError('environment not found');
      }
      return { ...authorized, scope: access.scopeFor(routeAccess.permission) };
    case 'clusters':
    case 'gate':
      return { ...authorized, scope: access.scopeFor(routeAccess.permission) };
  }
}

function authorize(
  route: RouteDefinition,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'authorize',
    before: async (request) => {
      request.context.authorized = await authorizeRequest(route, request.event);
    },
  };
}

export interface ApiHandlerOptions {
  /**
   * The handler takes the route's rate-limit count with its first write
   * (`request.rateLimit`, see RateLimitCharge) instead of apiHandler
   * taking it, in a round trip of its own, before the query is read.
   */
  foldsRateLimit?: boolean;
}

/** The Lambda handler of the route table entry `routeName`. */
export function apiHandler<N extends RouteName>(
  routeName: N,
  fn: ApiFunction<RouteNamed<N>>,
  options: ApiHandlerOptions = {},
) {
  // Fails the cold start (and the tests) instead of serving an unlisted route.
  const route = routeNamed(routeName);
  return middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(httpErrors())
    .use(authorize(route))
    .handler(async (event, context) => {
      const { authorized } = context;
      if (!authorized) throw new Error('authorize did not run');
      // The entry's per-user budget, after the access checks and before
      // anything else: counted here, or by the handler's first write.
      const { rateLimit: family } = route as RouteDefinition;
      const { db, access } = authorized;
      const rateLimit =
        family === undefined
          ? undefined
          : new RateLimitCharge(access.principal.sub, family);
      if (!options.foldsRateLimit) await rateLimit?.take(db);
      try {
        const query = readRouteQuery(event.rawQueryString, route.query);
        const reply = await fn({
          ...authorized,
          event,
          route,
          query,
          rateLimit,
        } as ApiRequest<RouteNamed<N>>);
        await rateLimit?.take(db);
        return isResult(reply) ? reply : ok(reply.data, reply.meta);
      } catch (error) {
        // A call that ended before its count was taken (a 400, say) is
        // counted now; a spent budget answers 429 instead, as it would
        // have had the count come first.
        await rateLimit?.take(db);
        throw error;
      }
    });
}
