/** GET /api/v1/clusters/{clusterID}/pods: filters namespace, phase; q; sort; paged. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listPods } from '../../shared/inventory/route.ts';

export const handler = apiHandler('list-pods', listPods);
