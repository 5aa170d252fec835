/**
 * What the live routes' entry files call, once the route table's access
 * checks passed and the query was read: one live read with the process's
 * NATS connection, or a page of the audit trail.
 */
import type { AccessContext, Scope } from '../auth/access.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import type { Db } from '../db/pool.ts';
import { pagingOf } from '../http/paging.ts';
import type { JsonText } from '../http/response.ts';
import {
  AUDIT_DEFAULT_PER_PAGE,
  type AuditListQuery,
  listAudit,
} from './audit.ts';
import { getLiveNats } from './nats.ts';
import { type LiveReadQuery, readLive } from './read.ts';

/** One live read by the caller of the cluster's agent. */
export async function serveLiveRead(
  request: {
    db: Db;
    access: AccessContext;
    cluster: ClusterRecord;
  },
  read: LiveReadQuery,
): Promise<{ data: JsonText }> {
  const data = await readLive(request.access.principal, request.cluster, read, {
    db: request.db,
    nats: getLiveNats,
  });
  return { data };
}

/** GET /api/v1/audit/live-reads within the caller's audit:read scope. */
export async function serveAuditList(request: {
  db: Db;
  scope: Scope;
  query: AuditListQuery;
}) {
  const { query } = request;
  const page = await listAudit(
    request.db,
    request.scope,
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
}
