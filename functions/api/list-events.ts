/** GET /api/v1/clusters/{clusterID}/events: the last 24 hours, newest first. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { readList } from '../../shared/inventory/list.ts';
import { LISTS } from '../../shared/inventory/lists.ts';

export const handler = apiHandler('list-events', ({ db, cluster, query }) =>
  readList(db, LISTS.events, cluster.id, query),
);
