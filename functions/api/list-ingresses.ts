/** GET /api/v1/clusters/{clusterID}/ingresses */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listIngresses } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-ingresses', listIngresses);
