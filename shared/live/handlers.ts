/**
 * What the live routes' entry files call: parse the route's parameters
 * (unknown ones refused) after the access checks, then one live read with
 * the process's NATS connection and the shared rate limiter.
 */

import type { ClusterRecord } from '../clusters/repo.ts';
import type { ApiRequest } from '../http/api-handler.ts';
import { pagingOf } from '../http/paging.ts';
import { parseQuery } from '../http/query.ts';
import type { JsonText } from '../http/response.ts';
import {
  AUDIT_DEFAULT_PER_PAGE,
  auditListQuerySchema,
  listAudit,
} from './audit.ts';
import { getLiveNats } from './nats.ts';
import {
  logsQuerySchema,
  manifestQuerySchema,
  revisionsQuerySchema,
} from './params.ts';
import { type LiveReadQuery, readLive } from './read.ts';

const SCHEMAS = {
  manifest: manifestQuerySchema,
  revisions: revisionsQuerySchema,
  logs: logsQuerySchema,
} as const;

/** The cluster read of one live route. */
export function liveRead(route: LiveReadQuery['route']) {
  return async (
    { event, access, db }: ApiRequest,
    cluster: ClusterRecord,
  ): Promise<{ data: JsonText }> => {
    const query = parseQuery(event.rawQueryString, SCHEMAS[route], {
      rejectUnknown: true,
    });
    const data = await readLive(
      access.principal,
      cluster,
      { route, query } as LiveReadQuery,
      { db, nats: getLiveNats },
    );
    return { data };
  };
}

/** GET /api/v1/audit/live-reads within the caller's audit:read scope. */
export async function listLiveReadAudit({ event, access, db }: ApiRequest) {
  const query = parseQuery(event.rawQueryString, auditListQuerySchema, {
    rejectUnknown: true,
  });
  return listAudit(
    db,
    access.scopeFor('audit:read'),
    {
      user: query.user,
      clusterId: query.cluster_id,
      route: query.route,
      from: query.from,
      to: query.to,
    },
    pagingOf(query, AUDIT_DEFAULT_PER_PAGE),
  );
}
