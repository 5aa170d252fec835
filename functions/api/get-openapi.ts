/** GET /api/v1/openapi.json: the OpenAPI 3.1 document, without auth. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { getOpenapi } from '../../shared/http/route.ts';
import { getOpenapiRoute } from '../../shared/http/routes.ts';

export const handler = apiHandler(getOpenapiRoute, getOpenapi);
