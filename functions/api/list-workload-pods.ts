/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}/pods: its pods. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listWorkloadPodsRoute } from '../../shared/http/routes.ts';
import { listWorkloadPods } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listWorkloadPodsRoute, listWorkloadPods);
