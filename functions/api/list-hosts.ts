/**
 * GET /api/v1/hosts: the CMDB hosts inside the caller's assets:read scope,
 * filtered by a PQL expression (shared/pql/), with their linked nodes.
 */
import { serveHostList } from '../../shared/hosts/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listHostsRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(listHostsRoute, async (request) => {
  const page = await serveHostList(request);
  return { data: page.items, meta: page.meta };
});
