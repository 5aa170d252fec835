/** GET /api/v1/clusters/{clusterID}/nodes: every node of the cluster. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listNodes } from '../../shared/inventory/nodes.ts';

export const handler = apiHandler('list-nodes', ({ db, cluster }) =>
  listNodes(db, cluster.id),
);
