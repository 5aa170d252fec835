/**
 * GET /api/v1/environments/{envID}/clusters: the environment's clusters,
 * filtered by the caller's assets:read scope (outside it: an empty list).
 */
import { listClusterPage } from '../../shared/clusters/list.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'list-environment-clusters',
  async ({ db, scope, query, event }) => {
    const page = await listClusterPage(db, scope, query, {
      environmentId: event.pathParameters?.envID,
    });
    return { data: page.items, meta: page.meta };
  },
);
