/** GET /api/v1/audit/live-reads: the live-read audit trail inside the caller's audit:read scope. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listLiveReadAuditRoute } from '../../shared/http/routes.ts';
import { listLiveReadAudit } from '../../shared/live/audit-route.ts';

export const handler = apiHandler(listLiveReadAuditRoute, listLiveReadAudit);
