/**
 * GET /api/v1/clusters/{clusterID}/changes: what changed in the cluster,
 * one namespace or one workload (shared/changes/what-changed.ts).
 */

import { listClusterChanges } from '../../shared/changes/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listClusterChangesRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(listClusterChangesRoute, listClusterChanges);
