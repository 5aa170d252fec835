/** GET /api/v1/clusters/{clusterID}/endpoint-slices */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listEndpointSlices } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-endpoint-slices',
  ({ db, event }, cluster) =>
    listEndpointSlices(db, cluster.id, parseQueryString(event.rawQueryString)),
);
