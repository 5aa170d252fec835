/** GET /api/v1/clusters/{clusterID}/network-policies */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listNetworkPolicies } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-network-policies',
  ({ db, event }, cluster) =>
    listNetworkPolicies(db, cluster.id, parseQueryString(event.rawQueryString)),
);
