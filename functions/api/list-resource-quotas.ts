/** GET /api/v1/clusters/{clusterID}/resource-quotas */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listResourceQuotasRoute } from '../../shared/http/routes.ts';
import { listResourceQuotas } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listResourceQuotasRoute, listResourceQuotas);
