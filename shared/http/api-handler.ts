/**
 * The middleware stack of every API function (`functions/api/<name>.ts`):
 * errors → authenticate → route gate → rate limit → handler.
 *
 * - authenticate: the verified JWT claims (AWS: the HTTP API's authorizer;
 *   locally: infra/local/api-server.ts) become an AccessContext with the
 *   caller's grants; no claims is a 401.
 * - route gate: the caller must hold one of the route table entry's
 *   permissions in some scope (RequireAnyPermissionInAnyScope), else 403.
 * - rate limit: when the entry names a family, one more call of the
 *   caller's budget (shared/http/rate-limit.ts), else 429.
 *
 * The handler then does the tenant check of what it reads (for a cluster:
 * checkClusterRead, 404 before 403) and only after that validates its query
 * parameters, so a 400 never confirms that something exists.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type {
  APIGatewayProxyEventV2WithJWTAuthorizer,
  Context,
} from 'aws-lambda';
import { AccessContext } from '../auth/access.ts';
import { principalFromEvent } from '../auth/claims.ts';
import { type Grant, listGrants } from '../auth/grants.ts';
import { type ClusterRecord, findClusterWithGrants } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import { getDb } from './context.ts';
import { httpErrors } from './error-middleware.ts';
import { isUuid } from './ids.ts';
import { enforceRateLimit } from './rate-limit.ts';
import type { ApiResult } from './response.ts';
import { type RouteDefinition, routes } from './routes.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;

/** What a handler receives once the caller is known and past the gate. */
export interface ApiRequest {
  event: ApiEvent;
  access: AccessContext;
  db: Db;
  route: RouteDefinition;
  /**
   * A cluster route's cluster, read with the caller's grants (null: no such
   * cluster); not yet checked against them. Undefined on other routes.
   */
  cluster?: ClusterRecord | null;
}

export type ApiFunction = (request: ApiRequest) => Promise<ApiResult>;

interface ApiContext extends Context {
  access?: AccessContext;
  db?: Db;
  cluster?: ClusterRecord | null;
}

/**
 * On a cluster route (`clusterParam` names its path parameter), the cluster
 * is read in the same round trip as the grants; the checks stay the
 * handler's, in their order.
 */
function authenticate(
  clusterParam: string | undefined,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'authenticate',
    before: async (request) => {
      const principal = principalFromEvent(request.event);
      const db = await getDb();
      const clusterId =
        clusterParam === undefined
          ? undefined
          : request.event.pathParameters?.[clusterParam];
      let grants: Grant[];
      if (isUuid(clusterId)) {
        const found = await findClusterWithGrants(
          db,
          clusterId,
          principal.email,
        );
        grants = found.grants;
        request.context.cluster = found.cluster ?? null;
      } else {
        grants = await listGrants(db, principal.email);
        if (clusterParam !== undefined) request.context.cluster = null;
      }
      request.context.db = db;
      request.context.access = new AccessContext(principal, grants);
    },
  };
}

function routeGate(
  route: RouteDefinition,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'routeGate',
    before: (request) => {
      request.context.access?.requireAnyPermissionInAnyScope(route.permissions);
    },
  };
}

/** The route's per-user budget, when its entry names one: after the gate. */
function rateLimit(
  route: RouteDefinition,
): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'rateLimit',
    before: async (request) => {
      const { access, db } = request.context;
      if (route.rateLimit === undefined || !access || !db) return;
      await enforceRateLimit(db, access.principal.sub, route.rateLimit);
    },
  };
}

/**
 * The Lambda handler of the route table entry `routeName`. `clusterParam`:
 * the path parameter holding the route's cluster id, read with the grants.
 */
export function apiHandler(
  routeName: string,
  fn: ApiFunction,
  options: { clusterParam?: string } = {},
) {
  const route = routes.find((entry) => entry.name === routeName);
  // Fails the cold start (and the tests) instead of serving an unlisted route.
  if (!route) throw new Error(`no route named ${routeName} in the route table`);
  return middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(httpErrors())
    .use(authenticate(options.clusterParam))
    .use(routeGate(route))
    .use(rateLimit(route))
    .handler(async (event, context) => {
      const { access, db, cluster } = context;
      if (!access || !db) throw new Error('authenticate did not run');
      return fn({ event, access, db, route, cluster });
    });
}
