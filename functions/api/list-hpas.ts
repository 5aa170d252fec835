/** GET /api/v1/clusters/{clusterID}/hpas */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-hpas', ({ db, cluster, query }) =>
  readList(db, LISTS.hpas, cluster.id, query),
);
