/** GET /api/v1/clusters/{clusterID}/services */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listServices } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-services',
  ({ db, event }, cluster) =>
    listServices(db, cluster.id, parseQueryString(event.rawQueryString)),
);
