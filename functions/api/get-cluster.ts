/** GET /api/v1/clusters/{clusterID}: the full cluster record. */
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler('get-cluster', async ({ cluster }) => ({
  data: cluster,
}));
