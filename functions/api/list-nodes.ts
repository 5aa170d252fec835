/** GET /api/v1/clusters/{clusterID}/nodes: every node of the cluster. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNodesRoute } from '../../shared/http/routes.ts';
import { listNodes } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listNodesRoute, listNodes);
