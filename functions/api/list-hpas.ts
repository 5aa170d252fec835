/** GET /api/v1/clusters/{clusterID}/hpas */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listHpas } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-hpas',
  ({ db, event }, cluster) =>
    listHpas(db, cluster.id, parseQueryString(event.rawQueryString)),
);
