/**
 * GET /api/v1/clients/{id}/clusters: the client's clusters the caller may
 * read (all of them with a client-wide grant, else its granted environments').
 */
import {
  clientReadScope,
  listClusterPage,
} from '../../shared/clusters/list.ts';
import { parseClusterListQuery } from '../../shared/clusters/list-query.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { ok } from '../../shared/http/response.ts';

export const handler = apiHandler(
  'list-client-clusters',
  async ({ event, access, db }) => {
    const { clientId, scope } = clientReadScope(
      access,
      event.pathParameters?.id,
    );
    const query = parseClusterListQuery(event.rawQueryString);
    const page = await listClusterPage(db, scope, query, { clientId });
    return ok(page.items, page.meta);
  },
);
