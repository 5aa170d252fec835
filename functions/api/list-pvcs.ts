/** GET /api/v1/clusters/{clusterID}/pvcs */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listPvcs } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-pvcs',
  ({ db, event }, cluster) =>
    listPvcs(db, cluster.id, parseQueryString(event.rawQueryString)),
);
