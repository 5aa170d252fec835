/**
 * The cluster metrics route's glue: the route table already checked access
 * (404, then 403 on metrics:read) and read the query string; this names the
 * query from the path (an unknown name is a 400), applies the rules between
 * the query and its parameters, and reads the store the process was given.
 */
import type { ApiRequest } from '../http/api-handler.ts';
import type { RouteNamed } from '../http/routes.ts';
import { getMetricsStore } from './context.ts';
import { queryNamed, toMetricsRequest } from './params.ts';
import { type MetricsData, readClusterMetrics } from './read.ts';

export function serveClusterMetrics(
  request: ApiRequest<RouteNamed<'get-cluster-metrics'>>,
): Promise<MetricsData> {
  const { cluster, query, event } = request;
  const metricsRequest = toMetricsRequest(
    queryNamed(event.pathParameters?.query),
    query,
  );
  return readClusterMetrics(getMetricsStore(), cluster, metricsRequest);
}
