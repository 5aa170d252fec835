/**
 * shared/lazy-stream-web.cjs, which the Lambda bundles take in
 * node:stream/web's place: requiring it loads nothing, and each export, when
 * read, is node:stream/web's own.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../../infra/paths.ts';

/** Runs `script` in a fresh Node process: this one has loaded the web streams. */
function inFreshNode(script: string): unknown {
  const run = spawnSync(process.execPath, ['-e', script], {
    encoding: 'utf8',
    env: { ...process.env, SHIM: fromRoot('shared/lazy-stream-web.cjs') },
  });
  expect(run.stderr).toBe('');
  return JSON.parse(run.stdout);
}

describe('the lazy node:stream/web', () => {
  it('loads the web streams only when an export is read, and gives their own', () => {
    // Act
    const seen = inFreshNode(`
      const loaded = () => process.moduleLoadList.includes('NativeModule stream/web');
      const shim = require(process.env.SHIM);
      const afterRequire = loaded();
      const Readable = shim.ReadableStream;
      const web = process.getBuiltinModule('node:stream/web');
      console.log(JSON.stringify({
        afterRequire,
        afterRead: loaded(),
        same: Object.keys(web).every((name) => shim[name] === web[name]),
        names: Object.keys(shim),
        webNames: Object.keys(web),
        isClass: Readable === web.ReadableStream,
      }));
    `) as Record<string, unknown>;
    // Assess
    expect(seen.afterRequire).toBe(false);
    expect(seen.afterRead).toBe(true);
    expect(seen.isClass).toBe(true);
    expect(seen.same).toBe(true);
    expect(seen.names).toEqual(seen.webNames);
  });
});
