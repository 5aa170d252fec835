/** GET /api/v1/clusters/{clusterID}/pods: filters namespace, phase; q; sort; paged. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listPodsRoute } from '../../shared/http/routes.ts';
import { listPods } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listPodsRoute, listPods);
