/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}: one node of the cluster. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { getNode } from '../../shared/inventory/nodes.ts';

export const handler = clusterReadHandler(
  'get-node',
  ({ db, event }, cluster) =>
    getNode(db, cluster.id, event.pathParameters?.nodeID ?? ''),
);
