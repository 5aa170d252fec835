/** GET /api/v1/clusters/{clusterID}/workloads: filters namespace, kind; q; sort; paged. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listWorkloadsRoute } from '../../shared/http/routes.ts';
import { listWorkloads } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listWorkloadsRoute, listWorkloads);
