/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}: one workload. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { getWorkload } from '../../shared/inventory/workloads.ts';

export const handler = clusterReadHandler(
  'get-workload',
  ({ db, event }, cluster) =>
    getWorkload(db, cluster.id, event.pathParameters?.workloadID ?? ''),
);
