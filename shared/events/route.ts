/**
 * The events timeline route's glue: the route table already checked access
 * (404, 403) and the budget; this applies the parameters' cross rules and
 * reads the cluster's event history (EVENT_HISTORY_DAYS) once (its
 * parameters: params.ts).
 */
import { getConfig } from '../config.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import { readTimeline, timelineQuery } from './timeline.ts';

export const listClusterEventTimeline: RouteFunction<
  'list-cluster-event-timeline'
> = async ({ db, cluster, query }) => {
  const now = new Date();
  const data = await readTimeline(db, timelineQuery(query, now), {
    clusterId: cluster.id,
    agentVersion: cluster.agent_version,
    historyDays: getConfig().EVENT_HISTORY_DAYS,
    now,
  });
  return { data };
};
