/** GET /api/v1/clusters/{clusterID}/pods: filters namespace, phase; q; sort; paged. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-pods', ({ db, cluster, query }) =>
  readList(db, LISTS.pods, cluster.id, query),
);
