/** GET /api/v1/clusters/{clusterID}/live/manifest: one object, read now through the cluster's agent. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getLiveManifestRoute } from '../../shared/http/routes.ts';
import { connectLiveNats, getLiveManifest } from '../../shared/live/route.ts';

export const handler = apiHandler(getLiveManifestRoute, getLiveManifest, {
  startEarly: connectLiveNats,
});
