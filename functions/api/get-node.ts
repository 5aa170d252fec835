/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}: one node of the cluster. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getNodeRoute } from '../../shared/http/routes.ts';
import { getNode } from '../../shared/inventory/route.ts';

export const handler = apiHandler(getNodeRoute, getNode);
