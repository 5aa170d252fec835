/** GET /api/v1/openapi.json: the OpenAPI 3.1 document, without auth. */
import { apiHandler } from '../../shared/http/api-handler.ts';
import { openApiDocument } from '../../shared/http/openapi.ts';
import { json } from '../../shared/http/response.ts';

// The table cannot change while the process runs: built once.
const document = openApiDocument();

export const handler = apiHandler('get-openapi', async () =>
  json(200, document),
);
