/**
 * GET /api/v1/clusters/{clusterID}/events/timeline: the cluster's events of
 * the past 14 days (shared/events/timeline.ts).
 */

import { listClusterEventTimeline } from '../../shared/events/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listClusterEventTimelineRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(
  listClusterEventTimelineRoute,
  listClusterEventTimeline,
);
