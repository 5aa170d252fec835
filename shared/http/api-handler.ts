/**
 * The middleware stack of every API function (`functions/api/<name>.ts`):
 * errors → authenticate → route gate → handler.
 *
 * - authenticate: the verified JWT claims (AWS: the HTTP API's authorizer;
 *   locally: infra/local/api-server.ts) become an AccessContext with the
 *   caller's grants; no claims is a 401.
 * - route gate: the caller must hold one of the route table entry's
 *   permissions in some scope (RequireAnyPermissionInAnyScope), else 403.
 *
 * The handler then does the tenant check of what it reads (for a cluster:
 * loadClusterForRead, 404 before 403) and only after that validates its query
 * parameters, so a 400 never confirms that something exists.
 */
import middy, { type MiddlewareObj } from '@middy/core';
import type {
  APIGatewayProxyEventV2WithJWTAuthorizer,
  Context,
} from 'aws-lambda';
import { AccessContext } from '../auth/access.ts';
import { principalFromEvent } from '../auth/claims.ts';
import { listGrants } from '../auth/grants.ts';
import type { Db } from '../db/pool.ts';
import { getDb } from './context.ts';
import { httpErrors } from './error-middleware.ts';
import type { ApiResult } from './response.ts';
import { type RouteDefinition, routes } from './routes.ts';

export type ApiEvent = APIGatewayProxyEventV2WithJWTAuthorizer;

/** What a handler receives once the caller is known and past the gate. */
export interface ApiRequest {
  event: ApiEvent;
  access: AccessContext;
  db: Db;
  route: RouteDefinition;
}

export type ApiFunction = (request: ApiRequest) => Promise<ApiResult>;

interface ApiContext extends Context {
  access?: AccessContext;
  db?: Db;
}

function authenticate(): MiddlewareObj<ApiEvent, ApiResult, Error, ApiContext> {
  return {
    name: 'authenticate',
    before: async (request) => {
      const principal = principalFromEvent(request.event);
      const db = await getDb();
      const grants = await listGrants(db, principal.email);
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

/** The Lambda handler of the route table entry `routeName`. */
export function apiHandler(routeName: string, fn: ApiFunction) {
  const route = routes.find((entry) => entry.name === routeName);
  // Fails the cold start (and the tests) instead of serving an unlisted route.
  if (!route) throw new Error(`no route named ${routeName} in the route table`);
  return middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(httpErrors())
    .use(authenticate())
    .use(routeGate(route))
    .handler(async (event, context) => {
      const { access, db } = context;
      if (!access || !db) throw new Error('authenticate did not run');
      return fn({ event, access, db, route });
    });
}
