/** GET /api/v1/clusters/{clusterID}/live/logs: one container's recent output through the cluster's agent, sanitized. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getLiveLogsRoute } from '../../shared/http/routes.ts';
import { connectLiveNats, getLiveLogs } from '../../shared/live/route.ts';

export const handler = apiHandler(getLiveLogsRoute, getLiveLogs, {
  startEarly: connectLiveNats,
});
