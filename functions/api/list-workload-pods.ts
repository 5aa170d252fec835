/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}/pods: its pods. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler(
  'list-workload-pods',
  ({ db, cluster, query, event }) =>
    readList(db, LISTS.pods, cluster.id, {
      ...query,
      scope: { name: 'workload', id: event.pathParameters?.workloadID ?? '' },
    }),
);
