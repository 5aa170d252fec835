/**
 * The inventory routes' glue: a cluster's nodes, namespaces and workloads,
 * and its resource lists (each one definition of shared/inventory/lists.ts
 * read by readList), once the route table checked the cluster and read the
 * list's parameters.
 */
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import { type ListDefinition, type ListQuery, readList } from './list.ts';
import { LISTS } from './lists.ts';
import * as namespaces from './namespaces.ts';
import * as nodes from './nodes.ts';
import * as workloads from './workloads.ts';

/** A resource list route: the definition's page of the cluster's rows. */
const listRoute =
  (definition: ListDefinition) =>
  (request: { db: Db; cluster: ClusterRecord; query: ListQuery }) =>
    readList(request.db, definition, request.cluster.id, request.query);

export const listPods: RouteFunction<'list-pods'> = listRoute(LISTS.pods);
export const listWorkloads: RouteFunction<'list-workloads'> = listRoute(
  LISTS.workloads,
);
export const listServices: RouteFunction<'list-services'> = listRoute(
  LISTS.services,
);
export const listIngresses: RouteFunction<'list-ingresses'> = listRoute(
  LISTS.ingresses,
);
export const listPvcs: RouteFunction<'list-pvcs'> = listRoute(LISTS.pvcs);
export const listJobs: RouteFunction<'list-jobs'> = listRoute(LISTS.jobs);
export const listHpas: RouteFunction<'list-hpas'> = listRoute(LISTS.hpas);
export const listEvents: RouteFunction<'list-events'> = listRoute(LISTS.events);
export const listEndpointSlices: RouteFunction<'list-endpoint-slices'> =
  listRoute(LISTS['endpoint-slices']);
export const listNetworkPolicies: RouteFunction<'list-network-policies'> =
  listRoute(LISTS['network-policies']);
export const listResourceQuotas: RouteFunction<'list-resource-quotas'> =
  listRoute(LISTS['resource-quotas']);

export const listNodes: RouteFunction<'list-nodes'> = ({ db, cluster }) =>
  nodes.listNodes(db, cluster.id);

export const getNode: RouteFunction<'get-node'> = ({ db, cluster, event }) =>
  nodes.getNode(db, cluster.id, event.pathParameters?.nodeID ?? '');

export const listNodeCapacity: RouteFunction<'list-node-capacity'> = ({
  db,
  cluster,
}) => nodes.listNodeCapacity(db, cluster.id);

/** The pods list narrowed to one node's or workload's pods (the path's id). */
const podsOf =
  (scope: 'node' | 'workload', pathParam: 'nodeID' | 'workloadID') =>
  (request: {
    db: Db;
    cluster: ClusterRecord;
    query: ListQuery;
    event: { pathParameters?: Record<string, string | undefined> };
  }) =>
    readList(request.db, LISTS.pods, request.cluster.id, {
      ...request.query,
      scope: {
        name: scope,
        id: request.event.pathParameters?.[pathParam] ?? '',
      },
    });

export const listNodePods: RouteFunction<'list-node-pods'> = podsOf(
  'node',
  'nodeID',
);

export const listNamespaces: RouteFunction<'list-namespaces'> = ({
  db,
  cluster,
}) => namespaces.listNamespaces(db, cluster.id);

export const listNamespaceUsage: RouteFunction<'list-namespace-usage'> = ({
  db,
  cluster,
}) => namespaces.listNamespaceUsage(db, cluster.id);

export const getWorkload: RouteFunction<'get-workload'> = ({
  db,
  cluster,
  event,
}) =>
  workloads.getWorkload(db, cluster.id, event.pathParameters?.workloadID ?? '');

export const listWorkloadPods: RouteFunction<'list-workload-pods'> = podsOf(
  'workload',
  'workloadID',
);
