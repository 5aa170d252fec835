/**
 * GET /api/v1/hosts/{hostID}: one CMDB host inside the caller's assets:read
 * scope, with the k8s nodes linked to it.
 */
import { serveHost } from '../../shared/hosts/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getHostRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(getHostRoute, async (request) => ({
  data: await serveHost(request),
}));
