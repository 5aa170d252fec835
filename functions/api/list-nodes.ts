/** GET /api/v1/clusters/{clusterID}/nodes: every node of the cluster. */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listNodes } from '../../shared/inventory/nodes.ts';

export const handler = clusterReadHandler('list-nodes', ({ db }, cluster) =>
  listNodes(db, cluster.id),
);
