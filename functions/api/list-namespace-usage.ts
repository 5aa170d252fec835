/** GET /api/v1/clusters/{clusterID}/namespaces/usage: requests, limits and pods per namespace. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNamespaceUsageRoute } from '../../shared/http/routes.ts';
import { listNamespaceUsage } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listNamespaceUsageRoute, listNamespaceUsage);
