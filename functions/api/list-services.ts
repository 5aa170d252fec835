/** GET /api/v1/clusters/{clusterID}/services */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listServices } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-services',
  ({ db, event }, cluster) =>
    listServices(db, cluster.id, parseQueryString(event.rawQueryString)),
);
