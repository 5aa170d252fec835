/** GET /api/v1/clusters/{clusterID}/namespaces: every namespace with its counts. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNamespaces } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-namespaces', listNamespaces);
