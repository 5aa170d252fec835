/** GET /api/v1/clusters/{clusterID}/summary: the cluster's health digest. */
import { getClusterSummary } from '../../shared/clusters/summary.ts';
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';

export const handler = clusterReadHandler(
  'get-cluster-summary',
  async ({ db }, cluster) => ({
    data: await getClusterSummary(db, cluster.id),
  }),
);
