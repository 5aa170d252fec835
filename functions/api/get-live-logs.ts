/** GET /api/v1/clusters/{clusterID}/live/logs: one container's recent output through the cluster's agent; logs:read, never assets:read. */
import { clusterReadHandler } from '../../shared/http/cluster-access.ts';
import { liveRead } from '../../shared/live/handlers.ts';

export const handler = clusterReadHandler(
  'get-live-logs',
  liveRead('logs'),
  'logs:read',
);
