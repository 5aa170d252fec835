/** GET /api/v1/clusters/{clusterID}/pvcs */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-pvcs', ({ db, cluster, query }) =>
  readList(db, LISTS.pvcs, cluster.id, query),
);
