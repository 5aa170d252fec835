/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}: one node of the cluster. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getNode } from '../../shared/inventory/nodes.ts';

export const handler = apiHandler('get-node', ({ db, cluster, event }) =>
  getNode(db, cluster.id, event.pathParameters?.nodeID ?? ''),
);
