/** GET /api/v1/clusters/{clusterID}/jobs */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-jobs', ({ db, cluster, query }) =>
  readList(db, LISTS.jobs, cluster.id, query),
);
