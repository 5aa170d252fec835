/**
 * The what-changed route's glue: the caller's sources on the cluster (the
 * route table's `sources` access shape already checked them: 404, 403),
 * its parameters' cross rules, and the read with the 14-day events history.
 */
import type { Permission } from '../auth/permissions.ts';
import { getConfig } from '../config.ts';
import type { ApiRequest } from '../http/api-handler.ts';
import type { RouteQuery } from '../http/query.ts';
import type { RouteNamed } from '../http/routes.ts';
import { historyEventsReader } from './timeline-events.ts';
import {
  readWhatChanged,
  SOURCE_PERMISSION,
  SOURCES,
  type TimelineSource,
  type WhatChanged,
  whatChangedParams,
  whatChangedQuery,
} from './what-changed.ts';

/** The route table's query entry: an unknown parameter is a 400. */
export const whatChangedRouteQuery = {
  schema: whatChangedParams,
  unknownParam: 'bad_request',
} as const satisfies RouteQuery;

/** The route table's sources: name → the permission that opens it. */
export const WHAT_CHANGED_SOURCES: Readonly<
  Record<TimelineSource, Permission>
> = SOURCE_PERMISSION;

export async function readClusterChanges(
  request: ApiRequest<RouteNamed<'list-cluster-changes'>>,
): Promise<WhatChanged> {
  const { db, cluster, access, sources, query } = request;
  const readable = new Set(
    SOURCES.filter((s) => (sources as readonly string[]).includes(s)),
  );
  const now = new Date();
  return readWhatChanged(db, {
    cluster: {
      id: cluster.id,
      clientId: cluster.client_id,
      environmentId: cluster.environment_id,
    },
    readable,
    scopeFor: (permission) => access.scopeFor(permission as Permission),
    query: whatChangedQuery(query, now),
    events: historyEventsReader(db, {
      agentVersion: cluster.agent_version,
      historyDays: getConfig().EVENT_HISTORY_DAYS,
      now,
    }),
    now,
  });
}
