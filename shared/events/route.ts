/**
 * The events timeline route's glue: the route table already checked access
 * (404, 403) and the budget; this applies the parameters' cross rules and
 * reads the cluster's event history (EVENT_HISTORY_DAYS) once.
 */
import { getConfig } from '../config.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import type { RouteQuery } from '../http/query.ts';
import { readTimeline, timelineParameters, timelineQuery } from './timeline.ts';

/** The route table's query entry: an unknown parameter is a 400. */
export const timelineRouteQuery = {
  schema: timelineParameters,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

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
