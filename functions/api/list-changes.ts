/** GET /api/v1/changes: recorded changes inside the caller's changes:read scope. */

import { listChanges } from '../../shared/changes/route.ts';
import { apiHandler } from '../../shared/http/api-handler.ts';

export const handler = apiHandler('list-changes', listChanges);
