/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}/pods: its pods. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listWorkloadPods } from '../../shared/inventory/workloads.ts';

export const handler = clusterReadHandler(
  'list-workload-pods',
  ({ db, event }, cluster) =>
    listWorkloadPods(
      db,
      cluster.id,
      event.pathParameters?.workloadID ?? '',
      parseQueryString(event.rawQueryString),
    ),
);
