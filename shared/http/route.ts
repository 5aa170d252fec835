/** The API's own route: its OpenAPI document, built from the route table. */
import type { RouteFunction } from './api-handler.ts';
import { openApiDocument } from './openapi.ts';
import { json } from './response.ts';

let document: Promise<object> | undefined;

export const getOpenapi: RouteFunction<'get-openapi'> = async () => {
  // The table cannot change while the process runs: built once.
  document ??= openApiDocument();
  return json(200, await document);
};
