/** GET /api/v1/clusters/{clusterID}/nodes/capacity: the Nodes tab capacity table. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNodeCapacityRoute } from '../../shared/http/routes.ts';
import { listNodeCapacity } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listNodeCapacityRoute, listNodeCapacity);
