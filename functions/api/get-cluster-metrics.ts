/** GET /api/v1/clusters/{clusterID}/metrics/{query}: one of the ten allow-listed metrics queries over a range (shared/metrics/). */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getClusterMetricsRoute } from '../../shared/http/routes.ts';
import { getClusterMetrics } from '../../shared/metrics/route.ts';

export const handler = apiHandler(getClusterMetricsRoute, getClusterMetrics);
