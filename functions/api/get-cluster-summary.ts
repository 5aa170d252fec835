/** GET /api/v1/clusters/{clusterID}/summary: the cluster's health digest. */

import { getClusterSummary } from '../../shared/clusters/summary.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'get-cluster-summary',
  async ({ db, cluster }) => ({
    data: await getClusterSummary(db, cluster.id),
  }),
);
