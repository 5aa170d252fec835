/** GET /api/v1/clusters/{clusterID}/events: the last 24 hours, newest first. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listEvents } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-events',
  ({ db, event }, cluster) =>
    listEvents(db, cluster.id, parseQueryString(event.rawQueryString)),
);
