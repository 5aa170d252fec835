/**
 * The middleware stack of every API function (`functions/api/<name>.ts`):
 * observed (logger context, metrics: shared/observability/middleware.ts;
 * no Tracer, shared/observability/tracer.ts says why) → errors → the
 * route's `startEarly`, if any → authorize (by the route table entry's
 * access) → query → handler.
 *
 * - authorize: unless the route is public, the verified JWT claims (AWS:
 *   the HTTP API's authorizer; locally: infra/local/api-server.ts) become an
 *   AccessContext with the caller's grants (no claims: 401); the route gate
 *   (RequireAnyPermissionInAnyScope on the entry's permissions, else 403);
 *   then the checks of the entry's access shape (shared/http/routes.ts):
 *   the cluster's 404/403, the client's 404/403, the scope of a list; a
 *   rate-limited route's call is counted by the same round trip as the
 *   grants read, and answered 429 once those checks passed.
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
import { type CallerRead, readCaller } from '../auth/caller.ts';
import { principalFromEvent } from '../auth/claims.ts';
import { listGrants } from '../auth/grants.ts';
import { clientReadScope } from '../clusters/list.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import { getDb } from '../db/process-pool.ts';
import { NotFoundError } from '../errors.ts';
import { observed } from '../observability/middleware.ts';
import { isUuid } from '../patterns.ts';
import { checkClusterRead } from './cluster-access.ts';
import { httpErrors } from './error-middleware.ts';
import { type QueryOf, readRouteQuery } from './query.ts';
import { RateLimitCharge } from './rate-limit.ts';
import { type ApiResult, ok } from './response.ts';
import {
  permissionsOf,
  type Route,
  type RouteDefinition,
  type RouteName,
  type RouteNamed,
  type RouteQueryOf,
  routeQuery,
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
  db: RouteDb<R>;
  route: R;
  /** The route's query schema's output. */
  query: QueryOf<RouteQueryOf<R>>;
  /** A cluster route's cluster, checked against the caller's grants. */
  cluster: R['access'] extends { shape: 'cluster' } ? ClusterRecord : undefined;
  /**
   * Where the route's permission holds (the cluster lists and gate routes;
   * inside the path's client on client-clusters); empty on other shapes.
   */
  scope: Scope;
  /** A sources route's sources the caller may read on this cluster. */
  sources: R['access'] extends { sources: infer S } ? (keyof S)[] : [];
}

/** A handler's answer: 200 with `{data, meta?}`, or a full result. */
export type ApiReply = { data: unknown; meta?: object } | ApiResult;

export type ApiFunction<R extends RouteDefinition = RouteDefinition> = (
  request: ApiRequest<R>,
) => Promise<ApiReply>;

/**
 * The glue between one route and its domain functions. Each lives in its
 * domain folder's `route.ts` (or a `<part>-route.ts` beside it, where one
 * route must not load the others' code: the live-read audit trail),
 * named after the route in camelCase (`list-cluster-changes` →
 * `listClusterChanges`), and its entry file is
 * `export const handler = apiHandler(<route>Route, <function>)` (the
 * table's entry, `listClusterChangesRoute`, not the whole table: a bundle
 * then holds no other route's entry nor the code its query loads), with
 * the options a route needs (the live reads' `startEarly`).
 */
export type RouteFunction<N extends RouteName> = ApiFunction<RouteNamed<N>>;

function isResult(reply: ApiReply): reply is ApiResult {
  return 'statusCode' in reply && !('data' in reply);
}

/** A route's database: none for a route without a login (`dbLogin: 'none'`). */
export type RouteDb<R extends RouteDefinition> = R extends { dbLogin: 'none' }
  ? undefined
  : Db;

interface Authorized {
  access: AccessContext;
  db: Db | undefined;
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
  const db =
    route.dbLogin === 'none'
      ? undefined
      : await getDb({
          applicationName: 'k8s-inventory-api',
          login: route.dbLogin === 'webhooks' ? 'receiver' : 'api',
        });
  const none = { db, cluster: undefined, scope: EMPTY_SCOPE, sources: [] };
  if (routeAccess.shape === 'public') return { ...none, access: ANONYMOUS };
  if (db === undefined) {
    throw new Error(
      `${route.name} reads its caller's grants, so it needs a database login`,
    );
  }
  const principal = principalFromEvent(event);
  const path = event.pathParameters ?? {};
  const clusterId =
    routeAccess.shape === 'cluster'
      ? path[ACCESS_PATH_PARAMS.cluster]
      : undefined;
  const { rateLimit: family } = route as RouteDefinition;
  const charge =
    family === undefined
      ? undefined
      : new RateLimitCharge(principal.sub, family);
  const read = await readCallerOnce(db, principal.email, {
    clusterId: isUuid(clusterId) ? clusterId : undefined,
    charge,
  });
  const access = new AccessContext(principal, read.grants);
  const authorized = checkAccess(route, access, path, read.cluster);
  // Counted with the read, answered only now: a caller who may not see the
  // cluster learns nothing from a 429 either.
  if (charge && read.counted) charge.settle(read.counted);
  else await charge?.take(db);
  return { ...none, ...authorized };
}

/**
 * The caller's grants, a cluster route's cluster and a rate-limited
 * route's count, in one round trip. Should the statement fail with a count
 * in it, the read runs alone: the count is then taken apart, so a limiter
 * failure fails open as on its own.
 */
async function readCallerOnce(
  db: Db,
  email: string | undefined,
  options: {
    clusterId: string | undefined;
    charge: RateLimitCharge | undefined;
  },
): Promise<CallerRead> {
  const { clusterId, charge } = options;
  if (clusterId === undefined && charge === undefined) {
    return {
      grants: await listGrants(db, email),
      cluster: undefined,
      counted: undefined,
    };
  }
  if (charge !== undefined) {
    try {
      return await readCaller(db, email, {
        clusterId,
        countCall: (params) => charge.foldInto(params),
      });
    } catch {
      // Tried again below without the count; a database that is down fails
      // there too, as any read would.
    }
  }
  return readCaller(db, email, { clusterId });
}

/** The route gate, then the checks of the entry's access shape. */
function checkAccess(
  route: RouteDefinition,
  access: AccessContext,
  path: Record<string, string | undefined>,
  cluster: ClusterRecord | undefined,
): Omit<Authorized, 'db'> {
  const { access: routeAccess } = route;
  access.requireAnyPermissionInAnyScope(permissionsOf(routeAccess));
  const authorized = {
    access,
    cluster: undefined,
    scope: EMPTY_SCOPE,
    sources: [],
  };
  switch (routeAccess.shape) {
    case 'public':
      return authorized;
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

function authenticatesItself(route: RouteDefinition): boolean {
  const { access } = route;
  return access.shape === 'public' && access.authenticatedBy !== 'nothing';
}

export interface ApiHandlerOptions {
  /**
   * Started as each request arrives, before the access checks, and not
   * awaited: opens a connection the route goes on to use (the live reads'
   * NATS), so that on a cold start it opens while the caller's grants are
   * read instead of after. It must not fail (a failure is the route's to
   * report when it uses the connection) and must send nothing anywhere.
   */
  startEarly?: () => unknown;
}

/** The Lambda handler of the route table entry `route`. */
export function apiHandler<R extends Route>(
  route: R,
  fn: ApiFunction<R>,
  options: ApiHandlerOptions = {},
) {
  const { startEarly } = options;
  return middy<ApiEvent, ApiResult, Error, ApiContext>()
    .use(observed())
    .use(httpErrors())
    .before(() => {
      startEarly?.();
    })
    .use(authorize(route))
    .handler(async (event, context) => {
      const { authorized } = context;
      if (!authorized) throw new Error('authorize did not run');
      // A route that authenticates its caller itself (a webhook's source
      // secret) reads its query once that passed: a 400 before the 401
      // would tell an unauthenticated caller the route's parameters.
      const query = authenticatesItself(route)
        ? undefined
        : readRouteQuery(event.rawQueryString, await routeQuery(route));
      const reply = await fn({
        ...authorized,
        event,
        route,
        query,
      } as ApiRequest<R>);
      return isResult(reply) ? reply : ok(reply.data, reply.meta);
    });
}
