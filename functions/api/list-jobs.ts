/** GET /api/v1/clusters/{clusterID}/jobs */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listJobsRoute } from '../../shared/http/routes.ts';
import { listJobs } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listJobsRoute, listJobs);
