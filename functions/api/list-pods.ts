/** GET /api/v1/clusters/{clusterID}/pods: filters namespace, phase; q; sort; paged. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listPods } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-pods',
  ({ db, event }, cluster) =>
    listPods(db, cluster.id, parseQueryString(event.rawQueryString)),
);
