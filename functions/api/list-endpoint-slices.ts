/** GET /api/v1/clusters/{clusterID}/endpoint-slices */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listEndpointSlicesRoute } from '../../shared/http/routes.ts';
import { listEndpointSlices } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listEndpointSlicesRoute, listEndpointSlices);
