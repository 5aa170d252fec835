/** GET /api/v1/clusters/{clusterID}/live/manifest: one object, read now through the cluster's agent. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { serveLiveRead } from '../../shared/live/handlers.ts';

export const handler = apiHandler('get-live-manifest', (request) =>
  serveLiveRead(request, { route: 'manifest', query: request.query }),
);
