/**
 * The live routes' glue, once the route table's access checks passed and
 * the query was read: one live read with the process's NATS connection, or
 * a page of the audit trail.
 */
import type { AccessContext } from '../auth/access.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import { pagingOf } from '../http/paging.ts';
import type { JsonText } from '../http/response.ts';
import { AUDIT_DEFAULT_PER_PAGE, listAudit } from './audit.ts';
import { getLiveNats } from './nats.ts';
import { type LiveReadQuery, readLive } from './read.ts';

/** One live read by the caller of the cluster's agent. */
async function liveRead(
  request: { db: Db; access: AccessContext; cluster: ClusterRecord },
  read: LiveReadQuery,
): Promise<{ data: JsonText }> {
  const { db, access, cluster } = request;
  const data = await readLive(access.principal, cluster, read, {
    db,
    nats: getLiveNats,
  });
  return { data };
}

export const getLiveManifest: RouteFunction<'get-live-manifest'> = (request) =>
  liveRead(request, { route: 'manifest', query: request.query });

export const listLiveRevisions: RouteFunction<'list-live-revisions'> = (
  request,
) => liveRead(request, { route: 'revisions', query: request.query });

export const getLiveLogs: RouteFunction<'get-live-logs'> = (request) =>
  liveRead(request, { route: 'logs', query: request.query });

/** GET /api/v1/audit/live-reads within the caller's audit:read scope. */
export const listLiveReadAudit: RouteFunction<'list-live-read-audit'> = async ({
  db,
  scope,
  query,
}) => {
  const page = await listAudit(
    db,
    scope,
    {
      user: query.user,
      clusterId: query.cluster_id,
      route: query.route,
      from: query.from,
      to: query.to,
    },
    pagingOf(query, AUDIT_DEFAULT_PER_PAGE),
  );
  return { data: page.items, meta: page.meta };
};
