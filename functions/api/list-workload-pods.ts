/** GET /api/v1/clusters/{clusterID}/workloads/{workloadID}/pods: its pods. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listWorkloadPods } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-workload-pods', listWorkloadPods);
