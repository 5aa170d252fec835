/** GET /api/v1/clusters/{clusterID}/endpoint-slices */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listEndpointSlices } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-endpoint-slices',
  ({ db, event }, cluster) =>
    listEndpointSlices(db, cluster.id, parseQueryString(event.rawQueryString)),
);
