/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}/pods: the node's pods. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler(
  'list-node-pods',
  ({ db, cluster, query, event }) =>
    readList(db, LISTS.pods, cluster.id, {
      ...query,
      scope: { name: 'node', id: event.pathParameters?.nodeID ?? '' },
    }),
);
