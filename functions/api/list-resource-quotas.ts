/** GET /api/v1/clusters/{clusterID}/resource-quotas */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler(
  'list-resource-quotas',
  ({ db, cluster, query }) =>
    readList(db, LISTS['resource-quotas'], cluster.id, query),
);
