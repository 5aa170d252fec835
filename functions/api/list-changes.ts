/** GET /api/v1/changes: recorded changes inside the caller's changes:read scope. */

import { listChanges } from '../../shared/changes/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';
import { listChangesRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(listChangesRoute, listChanges);
