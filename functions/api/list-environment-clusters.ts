/**
 * GET /api/v1/environments/{envID}/clusters: the environment's clusters,
 * filtered by the caller's assets:read scope (outside it: an empty list).
 */

import { listEnvironmentClusters } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listEnvironmentClustersRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(
  listEnvironmentClustersRoute,
  listEnvironmentClusters,
);
