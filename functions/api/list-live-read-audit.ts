/** GET /api/v1/audit/live-reads: the live-read audit trail inside the caller's audit:read scope. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { ok } from '../../shared/http/response.ts';
import { listLiveReadAudit } from '../../shared/live/handlers.ts';

export const handler = apiHandler('list-live-read-audit', async (request) => {
  const page = await listLiveReadAudit(request);
  return ok(page.items, page.meta);
});
