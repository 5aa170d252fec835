/** GET /api/v1/clusters/{clusterID}/pods: filters namespace, phase; q; sort; paged. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listPods } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-pods',
  ({ db, event }, cluster) =>
    listPods(db, cluster.id, parseQueryString(event.rawQueryString)),
);
