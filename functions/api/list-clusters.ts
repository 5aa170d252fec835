/** GET /api/v1/clusters: the clusters inside the caller's assets:read scope. */

import { listClusters } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listClustersRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(listClustersRoute, listClusters);
