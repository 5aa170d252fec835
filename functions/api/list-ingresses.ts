/** GET /api/v1/clusters/{clusterID}/ingresses */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listIngressesRoute } from '../../shared/http/routes.ts';
import { listIngresses } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listIngressesRoute, listIngresses);
