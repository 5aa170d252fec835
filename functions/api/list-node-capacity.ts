/** GET /api/v1/clusters/{clusterID}/nodes/capacity: the Nodes tab capacity table. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listNodeCapacity } from '../../shared/inventory/nodes.ts';

export const handler = clusterReadHandler(
  'list-node-capacity',
  ({ db }, cluster) => listNodeCapacity(db, cluster.id),
);
