/**
 * The change routes' glue. The change feed: the caller's changes:read
 * scope. What changed: the caller's sources on the cluster (the route
 * table's `sources` access shape already checked them: 404, 403), its
 * parameters' cross rules, and the read with the configured events history.
 * Both routes' parameters: params.ts.
 */
import type { Permission } from '../auth/permissions.ts';
import { getConfig } from '../config.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import { changeFeedQueryOf, listChangeFeed } from './feed.ts';
import { historyEventsReader } from './timeline-events.ts';
import { readWhatChanged, SOURCES, whatChangedQuery } from './what-changed.ts';

export const listChanges: RouteFunction<'list-changes'> = async ({
  db,
  scope,
  query,
}) => {
  const page = await listChangeFeed(db, scope, changeFeedQueryOf(query));
  return { data: page.items, meta: page.meta };
};

export const listClusterChanges: RouteFunction<
  'list-cluster-changes'
> = async ({ db, cluster, access, sources, query }) => {
  const readable = new Set(
    SOURCES.filter((s) => (sources as readonly string[]).includes(s)),
  );
  const historyDays = getConfig().EVENT_HISTORY_DAYS;
  const now = new Date();
  const data = await readWhatChanged(db, {
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
      historyDays,
      now,
    }),
    historyDays,
    now,
  });
  return { data };
};
