/** GET /api/v1/clusters/{clusterID}/namespaces/usage: requests, limits and pods per namespace. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNamespaceUsage } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-namespace-usage', listNamespaceUsage);
