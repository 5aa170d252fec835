/**
 * GET /api/v1/environments/{envID}/clusters: the environment's clusters,
 * filtered by the caller's assets:read scope (outside it: an empty list).
 */
import { listClusterPage } from '../../shared/clusters/list.ts';
import { parseClusterListQuery } from '../../shared/clusters/list-query.ts';
import { NotFoundError } from '../../shared/errors.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { isUuid } from '../../shared/http/ids.ts';
import { ok } from '../../shared/http/response.ts';

export const handler = apiHandler(
  'list-environment-clusters',
  async ({ event, access, db }) => {
    const environmentId = event.pathParameters?.envID;
    if (!isUuid(environmentId))
      throw new NotFoundError('environment not found');
    const query = parseClusterListQuery(event.rawQueryString);
    const scope = access.scopeFor('assets:read');
    const page = await listClusterPage(db, scope, query, { environmentId });
    return ok(page.items, page.meta);
  },
);
