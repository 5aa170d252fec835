/** GET /api/v1/clusters/{clusterID}/summary: the cluster's health digest. */

import { getClusterSummary } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getClusterSummaryRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(getClusterSummaryRoute, getClusterSummary);
