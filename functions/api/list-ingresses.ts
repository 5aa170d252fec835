/** GET /api/v1/clusters/{clusterID}/ingresses */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-ingresses', ({ db, cluster, query }) =>
  readList(db, LISTS.ingresses, cluster.id, query),
);
