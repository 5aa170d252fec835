/**
 * The cluster metrics route's glue: the route table already checked access
 * (404, then 403 on metrics:read) and read the query string; this names the
 * query from the path (an unknown name is a 400), applies the rules between
 * the query and its parameters, and reads the store the process was given.
 */
import type { RouteFunction } from '../http/api-handler.ts';
import { getMetricsStore } from './context.ts';
import { queryNamed, toMetricsRequest } from './params.ts';
import { readClusterMetrics } from './read.ts';

export const getClusterMetrics: RouteFunction<'get-cluster-metrics'> = async ({
  cluster,
  query,
  event,
}) => {
  const metricsRequest = toMetricsRequest(
    queryNamed(event.pathParameters?.query),
    query,
  );
  return {
    data: await readClusterMetrics(getMetricsStore(), cluster, metricsRequest),
  };
};
