/** GET /api/v1/openapi.json: the OpenAPI 3.1 document, without auth. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getOpenapi } from '../../shared/http/route.ts';

export const handler = apiHandler('get-openapi', getOpenapi);
