/** GET /api/v1/clusters/{clusterID}/namespaces: every namespace with its counts. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listNamespaces } from '../../shared/inventory/namespaces.ts';

export const handler = clusterReadHandler(
  'list-namespaces',
  ({ db }, cluster) => listNamespaces(db, cluster.id),
);
