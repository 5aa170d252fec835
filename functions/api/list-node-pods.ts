/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}/pods: the node's pods. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNodePodsRoute } from '../../shared/http/routes.ts';
import { listNodePods } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listNodePodsRoute, listNodePods);
