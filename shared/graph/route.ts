/**
 * The graph route's glue: the route table checked the cluster and read the
 * parameters (params.ts).
 */
import type { ApiRequest } from '../http/api-handler.ts';
import type { RouteNamed } from '../http/routes.ts';
import { type Graph, readGraph } from './walk.ts';

export function serveClusterGraph(
  request: ApiRequest<RouteNamed<'get-cluster-graph'>>,
): Promise<Graph> {
  return readGraph(request.db, request.cluster.id, request.query);
}
