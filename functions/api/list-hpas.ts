/** GET /api/v1/clusters/{clusterID}/hpas */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listHpasRoute } from '../../shared/http/routes.ts';
import { listHpas } from '../../shared/inventory/route.ts';

export const handler = apiHandler(listHpasRoute, listHpas);
