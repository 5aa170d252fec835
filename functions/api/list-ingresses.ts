/** GET /api/v1/clusters/{clusterID}/ingresses */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listIngresses } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-ingresses',
  ({ db, event }, cluster) =>
    listIngresses(db, cluster.id, parseQueryString(event.rawQueryString)),
);
