/** GET /api/v1/clusters/{clusterID}/workloads: filters namespace, kind; q; sort; paged. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-workloads', ({ db, cluster, query }) =>
  readList(db, LISTS.workloads, cluster.id, query),
);
