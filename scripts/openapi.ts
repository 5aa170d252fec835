/**
 * Writes docs/openapi.json from the route table (shared/http/openapi.ts).
 * Run it after adding or changing a route: `npm run openapi`.
 */
import { writeFileSync } from 'node:fs';
import { openApiText } from '../shared/http/openapi.ts';

const target = new URL('../docs/openapi.json', import.meta.url);
writeFileSync(target, openApiText());
console.info(`wrote ${target.pathname}`);
