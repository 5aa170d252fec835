/** GET /api/v1/clusters/{clusterID}/jobs */

import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { listJobs } from '../../shared/inventory/lists.ts';
import { parseQueryString } from '../../shared/inventory/params.ts';

export const handler = clusterReadHandler(
  'list-jobs',
  ({ db, event }, cluster) =>
    listJobs(db, cluster.id, parseQueryString(event.rawQueryString)),
);
