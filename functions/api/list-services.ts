/** GET /api/v1/clusters/{clusterID}/services */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listServicesRoute } from '../../shared/http/routes.ts';
import { listServices } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listServicesRoute, listServices);
