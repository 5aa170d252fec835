/**
 * Assembles shared/wire/object-end.wat into the TypeScript module that
 * carries its bytes (shared/wire/object-end-wasm.ts): read by `npm run
 * wasm` and by the unit test that holds the committed module to its source.
 */
import { readFileSync } from 'node:fs';
import wabt from 'wabt';

export const WAT = new URL('../shared/wire/object-end.wat', import.meta.url);
export const MODULE = new URL(
  '../shared/wire/object-end-wasm.ts',
  import.meta.url,
);

/** The text of object-end-wasm.ts, assembled from object-end.wat. */
export async function objectEndModuleText(): Promise<string> {
  const { parseWat } = await wabt();
  const wat = parseWat('object-end.wat', readFileSync(WAT, 'utf8'), {
    simd: true,
  });
  try {
    const { buffer } = wat.toBinary({});
    const base64 = Buffer.from(buffer).toString('base64');
    const lines = base64.match(/.{1,76}/g) ?? [];
    return [
      '// Generated from object-end.wat by `npm run wasm`: do not edit.',
      'export const OBJECT_END_WASM =',
      `${lines.map((l) => `  '${l}'`).join(' +\n')};`,
      '',
    ].join('\n');
  } finally {
    wat.destroy();
  }
}
