/** GET /api/v1/clusters/{clusterID}/live/revisions: a workload's rollout history, read now through the cluster's agent. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { liveRead } from '../../shared/live/handlers.ts';

export const handler = clusterReadHandler(
  'list-live-revisions',
  liveRead('revisions'),
);
