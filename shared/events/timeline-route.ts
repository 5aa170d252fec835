/**
 * The events timeline route's glue: the route table already checked access
 * (404, 403) and the budget; this applies the parameters' cross rules and
 * reads the cluster's 14-day history once.
 */
import { getConfig } from '../config.ts';
import type { ApiRequest } from '../http/api-handler.ts';
import type { RouteQuery } from '../http/query.ts';
import type { RouteNamed } from '../http/routes.ts';
import {
  readTimeline,
  type Timeline,
  timelineParameters,
  timelineQuery,
} from './timeline.ts';

/** The route table's query entry: an unknown parameter is a 400. */
export const timelineRouteQuery = {
  schema: timelineParameters,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

export async function readClusterTimeline(
  request: ApiRequest<RouteNamed<'list-cluster-event-timeline'>>,
): Promise<Timeline> {
  const { db, cluster, query } = request;
  const now = new Date();
  return readTimeline(db, timelineQuery(query, now), {
    clusterId: cluster.id,
    agentVersion: cluster.agent_version,
    historyDays: getConfig().EVENT_HISTORY_DAYS,
    now,
  });
}
