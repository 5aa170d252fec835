/** GET /api/v1/clusters/{clusterID}/endpoint-slices */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler(
  'list-endpoint-slices',
  ({ db, cluster, query }) =>
    readList(db, LISTS['endpoint-slices'], cluster.id, query),
);
