/** GET /api/v1/clusters/{clusterID}/services */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-services', ({ db, cluster, query }) =>
  readList(db, LISTS.services, cluster.id, query),
);
