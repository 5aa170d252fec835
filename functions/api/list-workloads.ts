/** GET /api/v1/clusters/{clusterID}/workloads: filters namespace, kind; q; sort; paged. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listWorkloads } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-workloads',
  ({ db, event }, cluster) =>
    listWorkloads(db, cluster.id, parseQueryString(event.rawQueryString)),
);
