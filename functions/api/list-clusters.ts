/** GET /api/v1/clusters: the clusters inside the caller's assets:read scope. */
import { listClusterPage } from '../../shared/clusters/list.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'list-clusters',
  async ({ db, scope, query }) => {
    const page = await listClusterPage(db, scope, query);
    return { data: page.items, meta: page.meta };
  },
);
