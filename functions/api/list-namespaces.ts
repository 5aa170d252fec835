/** GET /api/v1/clusters/{clusterID}/namespaces: every namespace with its counts. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNamespacesRoute } from '../../shared/http/routes.ts';
import { listNamespaces } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listNamespacesRoute, listNamespaces);
