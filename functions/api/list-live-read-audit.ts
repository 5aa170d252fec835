/** GET /api/v1/audit/live-reads: the live-read audit trail inside the caller's audit:read scope. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listLiveReadAudit } from '../../shared/live/audit-route.ts';

export const handler = apiHandler('list-live-read-audit', listLiveReadAudit);
