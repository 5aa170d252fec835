/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}: one node of the cluster. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getNode } from '../../shared/inventory/route.ts';

export const handler = apiHandler('get-node', getNode);
