/**
 * The live reads' glue, once the route table's access checks passed and
 * the query was read: one live read with the process's NATS connection.
 * The audit trail's route is audit-route.ts, so that its function's bundle
 * holds no NATS client.
 */
import type { AccessContext } from '../auth/access.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import type { RouteFunction } from '../http/api-handler.ts';
import type { JsonText } from '../http/response.ts';
import { getLiveNats } from './nats.ts';
import { type LiveReadQuery, readLive } from './read.ts';

/**
 * Opens the process's NATS connection (its secret, the client, the
 * handshake) without waiting for it: apiHandler's `startEarly`, so a cold
 * live read connects while the caller's grants are read. Never fails: a
 * connection that cannot be had is the read's 503 when it asks.
 */
export function connectLiveNats(): void {
  void getLiveNats();
}

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
