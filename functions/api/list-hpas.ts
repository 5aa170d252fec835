/** GET /api/v1/clusters/{clusterID}/hpas */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listHpas } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-hpas',
  ({ db, event }, cluster) =>
    listHpas(db, cluster.id, parseQueryString(event.rawQueryString)),
);
