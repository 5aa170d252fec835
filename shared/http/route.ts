/**
 * The API's own route: its OpenAPI document, served as docs/openapi.json
 * holds it. That file is what `npm run openapi` generates from the route
 * table (shared/http/openapi.ts), and a unit test fails while it is stale.
 * Building the document here instead loaded every route's query and turned
 * each into JSON Schema on the function's first request, a third of its
 * cold start.
 */
import document from '../../docs/openapi.json' with { type: 'json' };
import type { RouteFunction } from './api-handler.ts';
import { json } from './response.ts';

export const getOpenapi: RouteFunction<'get-openapi'> = async () =>
  json(200, document);
