/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}: one workload. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getWorkloadRoute } from '../../shared/http/routes.ts';
import { getWorkload } from '../../shared/inventory/route.ts';

export const handler = apiHandler(getWorkloadRoute, getWorkload);
