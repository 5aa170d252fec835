/**
 * GET /api/v1/clusters/{clusterID}/events/timeline: the cluster's events of
 * the past 14 days (shared/events/timeline.ts).
 */
import { readClusterTimeline } from '../../shared/events/timeline-route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler(
  'list-cluster-event-timeline',
  async (request) => ({ data: await readClusterTimeline(request) }),
);
