/** GET /api/v1/clusters/{clusterID}/pvcs */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listPvcsRoute } from '../../shared/http/routes.ts';
import { listPvcs } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listPvcsRoute, listPvcs);
