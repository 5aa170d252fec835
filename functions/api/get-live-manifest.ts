/** GET /api/v1/clusters/{clusterID}/live/manifest: one object, read now through the cluster's agent. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { liveRead } from '../../shared/live/handlers.ts';

export const handler = clusterReadHandler(
  'get-live-manifest',
  liveRead('manifest'),
);
