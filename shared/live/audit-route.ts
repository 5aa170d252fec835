/**
 * The live-read audit trail's route glue: a page of the trail within the
 * caller's audit:read scope. Apart from route.ts, whose live reads load
 * the NATS client: this function's bundle holds none of it.
 */
import type { RouteFunction } from '../http/api-handler.ts';
import { pagingOf } from '../http/paging.ts';
import { listAudit } from './audit.ts';
import { AUDIT_PAGING } from './params.ts';

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
    pagingOf(query, AUDIT_PAGING),
  );
  return { data: page.items, meta: page.meta };
};
