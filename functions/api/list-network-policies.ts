/** GET /api/v1/clusters/{clusterID}/network-policies */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler(
  'list-network-policies',
  ({ db, cluster, query }) =>
    readList(db, LISTS['network-policies'], cluster.id, query),
);
