/** GET /api/v1/clusters/{clusterID}/live/revisions: a workload's rollout history, read now through the cluster's agent. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listLiveRevisionsRoute } from '../../shared/http/routes.ts';
import { connectLiveNats, listLiveRevisions } from '../../shared/live/route.ts';

export const handler = apiHandler(listLiveRevisionsRoute, listLiveRevisions, {
  startEarly: connectLiveNats,
});
