/** GET /api/v1/clusters/{clusterID}/namespaces/usage: requests, limits and pods per namespace. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listNamespaceUsage } from '../../shared/inventory/namespaces.ts';

export const handler = clusterReadHandler(
  'list-namespace-usage',
  ({ db }, cluster) => listNamespaceUsage(db, cluster.id),
);
