/**
 * GET /api/v1/clusters/{clusterID}/graph: what an object is connected to,
 * up to three hops both ways (shared/graph/).
 */
import { serveClusterGraph } from '../../shared/graph/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getClusterGraphRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(getClusterGraphRoute, async (request) => ({
  data: await serveClusterGraph(request),
}));
