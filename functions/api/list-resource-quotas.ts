/** GET /api/v1/clusters/{clusterID}/resource-quotas */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listResourceQuotas } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-resource-quotas',
  ({ db, event }, cluster) =>
    listResourceQuotas(db, cluster.id, parseQueryString(event.rawQueryString)),
);
