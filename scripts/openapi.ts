/**
 * Writes docs/openapi.json and docs/api.md from the route table
 * (shared/http/openapi.ts, shared/http/api-reference.ts). Run it after
 * adding or changing a route: `npm run openapi`.
 */
import { writeFileSync } from 'node:fs';
import { apiReferenceText } from '../shared/http/api-reference.ts';
import { openApiText } from '../shared/http/openapi.ts';

for (const [file, text] of [
  ['openapi.json', await openApiText()],
  ['api.md', await apiReferenceText()],
] as const) {
  const target = new URL(`../docs/${file}`, import.meta.url);
  writeFileSync(target, text);
  console.info(`wrote ${target.pathname}`);
}
