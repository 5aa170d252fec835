/** GET /api/v1/clusters: the clusters inside the caller's assets:read scope. */
import { listClusterPage } from '../../shared/clusters/list.ts';
import { parseClusterListQuery } from '../../shared/clusters/list-query.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { ok } from '../../shared/http/response.ts';

export const handler = apiHandler(
  'list-clusters',
  async ({ event, access, db }) => {
    const query = parseClusterListQuery(event.rawQueryString);
    const page = await listClusterPage(
      db,
      access.scopeFor('assets:read'),
      query,
    );
    return ok(page.items, page.meta);
  },
);
