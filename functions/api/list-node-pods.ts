/** GET /api/v1/clusters/{clusterID}/nodes/{nodeID}/pods: the node's pods. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listNodePods } from '../../shared/inventory/nodes.ts';

export const handler = clusterReadHandler(
  'list-node-pods',
  ({ db, event }, cluster) =>
    listNodePods(
      db,
      cluster.id,
      event.pathParameters?.nodeID ?? '',
      parseQueryString(event.rawQueryString),
    ),
);
