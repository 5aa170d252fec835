/** GET /api/v1/clusters/{clusterID}/workloads: filters namespace, kind; q; sort; paged. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listWorkloads } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-workloads',
  ({ db, event }, cluster) =>
    listWorkloads(db, cluster.id, parseQueryString(event.rawQueryString)),
);
