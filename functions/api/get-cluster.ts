/** GET /api/v1/clusters/{clusterID}: the full cluster record. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';

export const handler = clusterReadHandler(
  'get-cluster',
  async (_, cluster) => ({
    data: cluster,
  }),
);
