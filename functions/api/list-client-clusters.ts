/**
 * GET /api/v1/clients/{id}/clusters: the client's clusters the caller may
 * read (all of them with a client-wide grant, else its granted environments').
 */
import { listClusterPage } from '../../shared/clusters/list.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'list-client-clusters',
  async ({ db, scope, query, event }) => {
    const page = await listClusterPage(db, scope, query, {
      clientId: event.pathParameters?.id,
    });
    return { data: page.items, meta: page.meta };
  },
);
