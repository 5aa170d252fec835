/**
 * Writes shared/wire/object-end-wasm.ts from shared/wire/object-end.wat.
 * Run it after changing the .wat: `npm run wasm`.
 */
import { writeFileSync } from 'node:fs';
import { MODULE, objectEndModuleText } from './wasm-module.ts';

writeFileSync(MODULE, await objectEndModuleText());
console.info(`wrote ${MODULE.pathname}`);
