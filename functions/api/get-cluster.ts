/** GET /api/v1/clusters/{clusterID}: the full cluster record. */

import { getCluster } from '../../shared/clusters/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getClusterRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(getClusterRoute, getCluster);
