/** GET /api/v1/clusters/{clusterID}/summary: the cluster's health digest. */

import { getClusterSummary } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler('get-cluster-summary', getClusterSummary);
