/**
 * The cluster routes' glue: one cluster (the route table loaded and checked
 * it), its summary, and the three cluster lists (all clusters, a client's,
 * an environment's), each a page of the caller's scope (their parameters:
 * params.ts).
 */
import type { RouteFunction } from '../http/api-handler.ts';
import { listClusterPage } from './list.ts';
import { getClusterSummary as readClusterSummary } from './summary.ts';

export const getCluster: RouteFunction<'get-cluster'> = async ({
  cluster,
}) => ({ data: cluster });

export const getClusterSummary: RouteFunction<'get-cluster-summary'> = async ({
  db,
  cluster,
}) => ({ data: await readClusterSummary(db, cluster.id) });

export const listClusters: RouteFunction<'list-clusters'> = async ({
  db,
  scope,
  query,
}) => {
  const page = await listClusterPage(db, scope, query);
  return { data: page.items, meta: page.meta };
};

/**
 * The client's clusters the caller may read (all of them with a client-wide
 * grant, else its granted environments').
 */
export const listClientClusters: RouteFunction<
  'list-client-clusters'
> = async ({ db, scope, query, event }) => {
  const page = await listClusterPage(db, scope, query, {
    clientId: event.pathParameters?.id,
  });
  return { data: page.items, meta: page.meta };
};

/** The environment's clusters, filtered by the caller's assets:read scope. */
export const listEnvironmentClusters: RouteFunction<
  'list-environment-clusters'
> = async ({ db, scope, query, event }) => {
  const page = await listClusterPage(db, scope, query, {
    environmentId: event.pathParameters?.envID,
  });
  return { data: page.items, meta: page.meta };
};
