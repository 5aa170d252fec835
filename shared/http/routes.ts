/**
 * The route table: every API endpoint, listed once, with who may call it and
 * what it reads from the query string. The local server mounts it, CDK
 * builds one Lambda and one API Gateway route per entry (no JWT authorizer
 * on a public one), apiHandler runs each entry's access checks and reads its
 * query, the tenant-isolation matrix and the unknown-parameter test walk it,
 * and the OpenAPI document is generated from it.
 *
 * Adding a route (GET /api/v1/clusters/{clusterID}/metrics/{query} on
 * metrics:read, the get-cluster-metrics entry below, was added this way):
 *
 * 1. Its parameters: one zod object over the values as received (strings),
 *    built from the shared fields (shared/http/fields.ts: namespaceField,
 *    kindField, uuidField, timeField, ...; paging: pagingFields), as a
 *    RouteQuery in its domain's `params.ts`, which loads none of the
 *    domain's other code, so the OpenAPI document and the tests that load
 *    every route's query load no domain's code (the inventory lists'
 *    queries, built from their definitions, are the exception):
 *
 *      export const metricsQuery = {
 *        schema: z.object({ start: timeField('start'), ... }),
 *        unknownParam: 'bad_request',   // the spec's code for this route
 *      } as const satisfies RouteQuery;
 *
 *    Pipe the object (`.transform(...)`) when the handler wants another
 *    shape. A route that takes no parameter uses NO_PARAMETERS.
 * 2. An entry below, and its name in `routes`:
 *
 *      export const getClusterMetricsRoute = {
 *        name: 'get-cluster-metrics',
 *        method: 'GET',
 *        path: '/api/v1/clusters/{clusterID}/metrics/{query}',
 *        summary: 'One of the cluster metrics queries over a time range',
 *        access: { shape: 'cluster', permission: 'metrics:read' },
 *        query: async () => (await import('../metrics/params.ts')).metricsQuery,
 *      } as const satisfies RouteDefinition;
 *
 *    Each entry is a constant of its own and a plain literal (no call, no
 *    `${...}`: the bundler cannot tell those free of side effects), so a
 *    function's bundle keeps its own entry and drops the others, with the
 *    modules their queries would load (test/infra/bundles.test.ts checks).
 * 3. functions/api/get-cluster-metrics.ts, thin:
 *
 *      export const handler = apiHandler(getClusterMetricsRoute, getClusterMetrics);
 *
 *    By the time the route function runs, the access checks of the entry's
 *    shape passed and `query` is its schema's output; it names no
 *    permission.
 * 4. `npm run openapi` rewrites docs/openapi.json (a test compares it and
 *    says so when it is stale). The isolation matrix and the
 *    unknown-parameter test pick the entry up.
 *
 * Access shapes (the spec's "Permissions" and "Environment-scoped grants"),
 * each gated by RequireAnyPermissionInAnyScope on its permission(s) first:
 * - cluster: a `/clusters/{clusterID}/...` read. The cluster is loaded with
 *   the caller's grants; outside their environments (or unknown, or a
 *   malformed id) 404; without the permission on its environment 403.
 *   `sources` instead of `permission` names several sources read under
 *   different permissions (what-changed: changes, deploys, alerts, events):
 *   the gate takes any of them, 403 only when none holds on the cluster's
 *   environment, and the handler gets `sources`, the names whose permission
 *   holds there, and reads only those.
 * - clusters: filtered by the caller's scope for the permission (`scope`).
 * - client-clusters: `{id}` is the client; 404 for a malformed id, 403
 *   without the permission anywhere in it, else the scope inside it.
 * - environment-clusters: `{envID}`; 404 for a malformed id, else the scope
 *   (outside it the list is empty).
 * - gate: the gate alone; the handler filters by `scope` itself.
 * - public: no JWT, no grants (`authenticatedBy` says what, if anything,
 *   does: the OpenAPI document nothing, a webhook its source's secret).
 *
 * Query parameters are read only after those checks, so a 400 never
 * confirms that something exists; a parameter the route does not know is
 * a 400 with the route's `unknownParam` code, naming it.
 */

import type { Permission } from '../auth/permissions.ts';
import { WHAT_CHANGED_SOURCES } from '../changes/sources.ts';
import { type ErrorCode, LIVE_READ_FAILURES } from '../errors.ts';
import { NO_PARAMETERS, type RouteQuery } from './query.ts';
import type { RateLimitFamily } from './rate-limit.ts';

/** Access decided by one permission. */
export interface PermissionAccess {
  readonly shape:
    | 'cluster'
    | 'clusters'
    | 'client-clusters'
    | 'environment-clusters'
    | 'gate';
  readonly permission: Permission;
}

/** A cluster route reading several sources, each under its own permission. */
export interface SourcesAccess {
  readonly shape: 'cluster';
  /** Source name to the permission that opens it. */
  readonly sources: Readonly<Record<string, Permission>>;
}

/** No JWT: nothing, or something the handler checks, authenticates it. */
export interface PublicAccess {
  readonly shape: 'public';
  readonly authenticatedBy: 'nothing' | 'webhook source secret';
}

export type RouteAccess = PermissionAccess | SourcesAccess | PublicAccess;

export type AccessShape = RouteAccess['shape'];

export interface RouteDefinition {
  /** The entry file `functions/api/<name>.ts` and the function's id. */
  readonly name: string;
  readonly method: 'GET' | 'POST';
  /** API Gateway path syntax: `{param}`. */
  readonly path: string;
  /** One line for the OpenAPI document. */
  readonly summary: string;
  readonly access: RouteAccess;
  /**
   * The route's query, loaded on first call (routeQuery): its schema lives
   * with its domain code, and a function must not build every route's
   * schemas, nor load every domain's code, at its cold start.
   */
  readonly query: LazyRouteQuery;
  /**
   * The handler asks cluster agents over NATS (the live reads): CDK gives
   * its function the NATS secret, and no other function gets it.
   */
  readonly liveReads?: true;
  /**
   * The database login the route's function connects as: the read-only
   * `reader` unless named. The webhook receiver stores deploys and alert
   * groups, so it gets a login that may write those and nothing else. A
   * public route that reads nothing stored (the OpenAPI document) says
   * `none`: its function holds no login and opens no connection, so an
   * unauthenticated caller reaches nothing that could read tenant data,
   * and its cold start pays for no secret read, TLS handshake or login.
   */
  readonly dbLogin?: 'webhooks' | 'none';
  /** The per-user budget this route counts against (rate-limit.ts). */
  readonly rateLimit?: RateLimitFamily;
  /**
   * The error codes the route's own domain answers, beyond those of its
   * access, its parameters and its budget (the OpenAPI document lists them).
   */
  readonly failures?: readonly ErrorCode[];
}

/** The permissions the route gate accepts (any one of them); none if public. */
export function permissionsOf(access: RouteAccess): Permission[] {
  if (access.shape === 'public') return [];
  if ('sources' in access) return [...new Set(Object.values(access.sources))];
  return [access.permission];
}

/**
 * A route's query as the table holds it: a function that loads it by
 * `import()`. In a bundle, a module reached only this way is evaluated only
 * when called, so an API function evaluates its own route's query and domain
 * code and no other; `routeQuery` loads it once.
 */
export type LazyRouteQuery<Q extends RouteQuery = RouteQuery> =
  () => Promise<Q>;

/** The query a route's handler reads (its schema's output is QueryOf this). */
export type RouteQueryOf<R extends RouteDefinition> = Awaited<
  ReturnType<R['query']>
>;

const loadedQueries = new WeakMap<RouteDefinition, Promise<RouteQuery>>();

/**
 * The entry's query: loaded on the first call, then the same object (an
 * inventory list's query is built from its definition, once); a load that
 * failed is tried again on the next call.
 */
export function routeQuery<R extends RouteDefinition>(
  entry: R,
): Promise<RouteQueryOf<R>> {
  let loaded = loadedQueries.get(entry);
  if (loaded === undefined) {
    loaded = entry.query().catch((error: unknown) => {
      loadedQueries.delete(entry);
      throw error;
    });
    loadedQueries.set(entry, loaded);
  }
  return loaded as Promise<RouteQueryOf<R>>;
}

const noParameters = async () => NO_PARAMETERS;

/** An entry whose query is loaded (the OpenAPI document, the tests). */
export type ResolvedRoute = Omit<RouteDefinition, 'query'> & {
  readonly query: RouteQuery;
};

/** Every entry with its query loaded: loads every route's domain code. */
export async function resolvedRoutes(
  table: readonly RouteDefinition[] = routes,
): Promise<ResolvedRoute[]> {
  return Promise.all(
    table.map(async (entry) => ({ ...entry, query: await routeQuery(entry) })),
  );
}

const assets = 'assets:read';
const clusterRead = { shape: 'cluster', permission: assets } as const;

export const listClustersRoute = {
  name: 'list-clusters',
  method: 'GET',
  path: '/api/v1/clusters',
  summary: 'The clusters the caller may read',
  access: { shape: 'clusters', permission: assets },
  query: async () => (await import('../clusters/params.ts')).clusterListQuery,
} as const satisfies RouteDefinition;

export const listClientClustersRoute = {
  name: 'list-client-clusters',
  method: 'GET',
  path: '/api/v1/clients/{id}/clusters',
  summary: "A client's clusters the caller may read",
  access: { shape: 'client-clusters', permission: assets },
  query: async () => (await import('../clusters/params.ts')).clusterListQuery,
} as const satisfies RouteDefinition;

export const listEnvironmentClustersRoute = {
  name: 'list-environment-clusters',
  method: 'GET',
  path: '/api/v1/environments/{envID}/clusters',
  summary: "An environment's clusters the caller may read",
  access: { shape: 'environment-clusters', permission: assets },
  query: async () => (await import('../clusters/params.ts')).clusterListQuery,
} as const satisfies RouteDefinition;

export const getClusterRoute = {
  name: 'get-cluster',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}',
  summary: 'The full cluster record',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const getClusterSummaryRoute = {
  name: 'get-cluster-summary',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/summary',
  summary: "The cluster's health digest",
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listNodesRoute = {
  name: 'list-nodes',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/nodes',
  summary: 'Every node of the cluster',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listNodeCapacityRoute = {
  name: 'list-node-capacity',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/nodes/capacity',
  summary: 'The Nodes tab capacity table (at most 1,000 nodes)',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const getNodeRoute = {
  name: 'get-node',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/nodes/{nodeID}',
  summary: 'One node of the cluster',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listNodePodsRoute = {
  name: 'list-node-pods',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/nodes/{nodeID}/pods',
  summary: "The node's pods",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.pods);
  },
} as const satisfies RouteDefinition;

export const listNamespacesRoute = {
  name: 'list-namespaces',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/namespaces',
  summary: 'Every namespace with its counts',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listNamespaceUsageRoute = {
  name: 'list-namespace-usage',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/namespaces/usage',
  summary: 'Requests, limits and pods per namespace',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listWorkloadsRoute = {
  name: 'list-workloads',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/workloads',
  summary: "The cluster's workloads",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.workloads);
  },
} as const satisfies RouteDefinition;

export const getWorkloadRoute = {
  name: 'get-workload',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/workloads/{workloadID}',
  summary: 'One workload',
  access: clusterRead,
  query: noParameters,
} as const satisfies RouteDefinition;

export const listWorkloadPodsRoute = {
  name: 'list-workload-pods',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/workloads/{workloadID}/pods',
  summary: "The workload's pods",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.pods);
  },
} as const satisfies RouteDefinition;

export const listPodsRoute = {
  name: 'list-pods',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/pods',
  summary: "The cluster's pods",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.pods);
  },
} as const satisfies RouteDefinition;

export const listServicesRoute = {
  name: 'list-services',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/services',
  summary: "The cluster's services",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.services);
  },
} as const satisfies RouteDefinition;

export const listIngressesRoute = {
  name: 'list-ingresses',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/ingresses',
  summary: "The cluster's ingresses",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.ingresses);
  },
} as const satisfies RouteDefinition;

export const listPvcsRoute = {
  name: 'list-pvcs',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/pvcs',
  summary: "The cluster's persistent volume claims",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.pvcs);
  },
} as const satisfies RouteDefinition;

export const listEventsRoute = {
  name: 'list-events',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/events',
  summary: "The cluster's events of the last 24 hours, newest first",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.events);
  },
} as const satisfies RouteDefinition;

export const listJobsRoute = {
  name: 'list-jobs',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/jobs',
  summary: "The cluster's jobs and cron jobs",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.jobs);
  },
} as const satisfies RouteDefinition;

export const listHpasRoute = {
  name: 'list-hpas',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/hpas',
  summary: "The cluster's horizontal pod autoscalers",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS.hpas);
  },
} as const satisfies RouteDefinition;

export const listNetworkPoliciesRoute = {
  name: 'list-network-policies',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/network-policies',
  summary: "The cluster's network policies",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS['network-policies']);
  },
} as const satisfies RouteDefinition;

export const listResourceQuotasRoute = {
  name: 'list-resource-quotas',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/resource-quotas',
  summary: "The cluster's resource quotas",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS['resource-quotas']);
  },
} as const satisfies RouteDefinition;

export const listEndpointSlicesRoute = {
  name: 'list-endpoint-slices',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/endpoint-slices',
  summary: "The cluster's endpoint slices",
  access: clusterRead,
  query: async () => {
    const [{ listQuery }, { LISTS }] = await Promise.all([
      import('../inventory/list.ts'),
      import('../inventory/lists.ts'),
    ]);
    return listQuery(LISTS['endpoint-slices']);
  },
} as const satisfies RouteDefinition;

export const listClusterEventTimelineRoute = {
  name: 'list-cluster-event-timeline',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/events/timeline',
  summary:
    "The cluster's events of the past 14 days, filtered, newest first, messages sanitized",
  access: clusterRead,
  query: async () => (await import('../events/params.ts')).timelineRouteQuery,
  rateLimit: 'events-timeline',
  failures: ['events_backend_unavailable', 'events_backend_timeout'],
} as const satisfies RouteDefinition;

export const getClusterGraphRoute = {
  name: 'get-cluster-graph',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/graph',
  summary:
    'What one stored object is connected to: its relations, both ways, up to three hops',
  access: clusterRead,
  query: async () => (await import('../graph/params.ts')).graphQuery,
} as const satisfies RouteDefinition;

export const listHostsRoute = {
  name: 'list-hosts',
  method: 'GET',
  path: '/api/v1/hosts',
  summary:
    "The CMDB hosts inside the caller's assets:read scope, filtered by PQL, with their k8s nodes",
  access: { shape: 'gate', permission: assets },
  query: async () => (await import('../hosts/params.ts')).hostListQuery,
  failures: ['invalid_pql'],
} as const satisfies RouteDefinition;

export const getHostRoute = {
  name: 'get-host',
  method: 'GET',
  path: '/api/v1/hosts/{hostID}',
  summary:
    "One CMDB host inside the caller's assets:read scope, with its k8s nodes",
  access: { shape: 'gate', permission: assets },
  query: noParameters,
} as const satisfies RouteDefinition;

export const getClusterMetricsRoute = {
  name: 'get-cluster-metrics',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/metrics/{query}',
  summary:
    'One of the ten allow-listed metrics queries over a range (or instant), confined to the cluster',
  access: { shape: 'cluster', permission: 'metrics:read' },
  query: async () => (await import('../metrics/params.ts')).metricsQuery,
  failures: ['metrics_not_configured', 'bad_gateway'],
} as const satisfies RouteDefinition;

export const getLiveManifestRoute = {
  name: 'get-live-manifest',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/live/manifest',
  summary: "One object, read now through the cluster's agent (redacted there)",
  access: clusterRead,
  query: async () => (await import('../live/params.ts')).manifestQuery,
  liveReads: true,
  failures: LIVE_READ_FAILURES,
  rateLimit: 'live-manifest-revisions',
} as const satisfies RouteDefinition;

export const listLiveRevisionsRoute = {
  name: 'list-live-revisions',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/live/revisions',
  summary: "A workload's rollout history, read now through the cluster's agent",
  access: clusterRead,
  query: async () => (await import('../live/params.ts')).revisionsQuery,
  liveReads: true,
  failures: LIVE_READ_FAILURES,
  rateLimit: 'live-manifest-revisions',
} as const satisfies RouteDefinition;

export const getLiveLogsRoute = {
  name: 'get-live-logs',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/live/logs',
  summary:
    "One container's recent output through the cluster's agent, sanitized",
  access: { shape: 'cluster', permission: 'logs:read' },
  query: async () => (await import('../live/params.ts')).logsQuery,
  liveReads: true,
  failures: LIVE_READ_FAILURES,
  rateLimit: 'live-logs',
} as const satisfies RouteDefinition;

export const listLiveReadAuditRoute = {
  name: 'list-live-read-audit',
  method: 'GET',
  path: '/api/v1/audit/live-reads',
  summary: "Who read what live, inside the caller's audit:read scope",
  access: { shape: 'gate', permission: 'audit:read' },
  query: async () => (await import('../live/params.ts')).auditListQuery,
} as const satisfies RouteDefinition;

export const listChangesRoute = {
  name: 'list-changes',
  method: 'GET',
  path: '/api/v1/changes',
  summary: "Recorded changes inside the caller's changes:read scope",
  access: { shape: 'gate', permission: 'changes:read' },
  query: async () => (await import('../changes/params.ts')).changeFeedQuery,
} as const satisfies RouteDefinition;

export const listClusterChangesRoute = {
  name: 'list-cluster-changes',
  method: 'GET',
  path: '/api/v1/clusters/{clusterID}/changes',
  summary:
    'What changed in the cluster, a namespace or a workload: recorded changes, deploys, events and alerts, newest first',
  access: { shape: 'cluster', sources: WHAT_CHANGED_SOURCES },
  query: async () =>
    (await import('../changes/params.ts')).whatChangedRouteQuery,
  rateLimit: 'what-changed',
} as const satisfies RouteDefinition;

export const receiveWebhookRoute = {
  name: 'receive-webhook',
  method: 'POST',
  path: '/api/v1/webhooks/{sourceID}',
  summary:
    "A webhook source's notification: Argo CD (deploys) or Alertmanager (alert groups)",
  access: { shape: 'public', authenticatedBy: 'webhook source secret' },
  query: noParameters,
  dbLogin: 'webhooks',
  failures: [
    'bad_request',
    'unauthorized',
    'payload_too_large',
    'unsupported_media_type',
    'unprocessable',
  ],
} as const satisfies RouteDefinition;

export const getOpenapiRoute = {
  name: 'get-openapi',
  method: 'GET',
  path: '/api/v1/openapi.json',
  summary: 'This OpenAPI 3.1 document',
  access: { shape: 'public', authenticatedBy: 'nothing' },
  query: noParameters,
  dbLogin: 'none',
} as const satisfies RouteDefinition;

export const routes = [
  listClustersRoute,
  listClientClustersRoute,
  listEnvironmentClustersRoute,
  getClusterRoute,
  getClusterSummaryRoute,
  listNodesRoute,
  listNodeCapacityRoute,
  getNodeRoute,
  listNodePodsRoute,
  listNamespacesRoute,
  listNamespaceUsageRoute,
  listWorkloadsRoute,
  getWorkloadRoute,
  listWorkloadPodsRoute,
  listPodsRoute,
  listServicesRoute,
  listIngressesRoute,
  listPvcsRoute,
  listEventsRoute,
  listJobsRoute,
  listHpasRoute,
  listNetworkPoliciesRoute,
  listResourceQuotasRoute,
  listEndpointSlicesRoute,
  listClusterEventTimelineRoute,
  getClusterGraphRoute,
  listHostsRoute,
  getHostRoute,
  getClusterMetricsRoute,
  getLiveManifestRoute,
  listLiveRevisionsRoute,
  getLiveLogsRoute,
  listLiveReadAuditRoute,
  listChangesRoute,
  listClusterChangesRoute,
  receiveWebhookRoute,
  getOpenapiRoute,
] as const;

export type Route = (typeof routes)[number];
export type RouteName = Route['name'];
export type RouteNamed<N extends RouteName> = Extract<Route, { name: N }>;
