/** GET /api/v1/clusters/{clusterID}/jobs */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { parseQueryString } from '../../shared/http/query.ts';
import { listJobs } from '../../shared/inventory/lists.ts';

export const handler = clusterReadHandler(
  'list-jobs',
  ({ db, event }, cluster) =>
    listJobs(db, cluster.id, parseQueryString(event.rawQueryString)),
);
