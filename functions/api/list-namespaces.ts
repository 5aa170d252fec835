/** GET /api/v1/clusters/{clusterID}/namespaces: every namespace with its counts. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNamespaces } from '../../shared/inventory/namespaces.ts';

export const handler = apiHandler('list-namespaces', ({ db, cluster }) =>
  listNamespaces(db, cluster.id),
);
