/**
 * The repository reads nothing outside itself. A clone with nothing beside
 * it must run every test, bench and script; CI lays the team kit beside its
 * clone, so a path that leaves the repository would pass there and fail for
 * everyone else. This reads every code and config file in the tree (tracked
 * or not; node_modules and build output aside) and fails on:
 *  - a relative string literal (import specifier, `new URL(…, import.meta.url)`,
 *    `resolve(here, …)`) that, joined with the file's folder, leaves the root;
 *  - a run of `'..'` arguments (`resolve(here, '..', '..')`) that does;
 *  - a relative path in a shell script or an npm script that leaves the root
 *    (both run from the root);
 *  - an absolute path into /work, where the kit and the worktrees live;
 *  - any path into the domain folder's old fixtures folder: fixtures live in
 *    test/fixtures/, so such a path can only be the kit's, beside the clone;
 *  - a symbolic link that points outside the root.
 */
import {
  lstatSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
} from 'node:fs';
import {
  dirname,
  extname,
  isAbsolute,
  join,
  relative,
  resolve,
  sep,
} from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const here = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(here, '../../..');

/** Build output, installed packages and local data: not the repository's. */
const SKIPPED_DIRS = new Set([
  '.git',
  'node_modules',
  'cdk.out',
  '.data',
  'dist',
  'coverage',
]);
const CODE = new Set(['.ts', '.mts', '.cts', '.tsx', '.js', '.mjs', '.cjs']);
const CONFIG = new Set(['.json', '.yaml', '.yml']);

function outside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel);
}

function isShell(path: string, text: string): boolean {
  return extname(path) === '.sh' || text.startsWith('#!');
}

/** Relative paths in shell words: `../x`, `./..`, not `$(dirname "$0")/..`. */
const SHELL_PATH = /(?<![\w$)./-])\.\.?(?:\/[^\s'"`;)|&]*)?(?![\w.])/g;
/** A string literal, or in a shell script a word, that starts at /work/. */
const WORK_LITERAL = /(['"`])(?:file:\/\/)?\/work\//g;
const WORK_WORD = /(?<![\w./-])\/work\//g;
/** The kit's fixtures folder, written as one path or as path segments. */
const KIT_FIXTURES = /shared\/fixtures|(['"])shared\1\s*,\s*(['"])fixtures\2/;

/** Every way `text` (the file `file` of the tree at `root`) reaches out. */
function escapes(root: string, file: string, text: string): string[] {
  const found: string[] = [];
  const dir = dirname(join(root, file));
  const check = (literal: string, base: string, what: string) => {
    if (outside(root, resolve(base, literal))) found.push(`${what} ${literal}`);
  };
  if (isShell(file, text)) {
    for (const [word] of text.matchAll(SHELL_PATH))
      check(word, root, 'shell path');
  } else {
    for (const m of text.matchAll(/(['"`])(\.\.?(?:\/[^'"`\n]*)?)\1/g)) {
      const literal = (m[2] as string).split('${')[0] as string;
      check(literal, dir, 'relative path');
    }
    for (const m of text.matchAll(/(?:(['"])\.\.\1\s*,\s*)+(['"])\.\.\2/g)) {
      const ups = (m[0].match(/\.\./g) ?? []).join('/');
      check(ups, dir, 'path segments');
    }
  }
  if (file === 'package.json') {
    const scripts = (JSON.parse(text) as { scripts?: Record<string, string> })
      .scripts;
    for (const script of Object.values(scripts ?? {})) {
      for (const [word] of ` ${script}`.matchAll(SHELL_PATH))
        check(word, root, 'npm script path');
    }
  }
  const work = isShell(file, text) ? WORK_WORD : WORK_LITERAL;
  for (const m of text.matchAll(work))
    found.push(`an absolute path into /work at offset ${m.index}`);
  if (KIT_FIXTURES.test(text))
    found.push(
      "a path to the fixtures folder that moved to test/fixtures/ (any other is the kit's, beside the clone)",
    );
  return found;
}

interface Tree {
  /** Repository-relative paths of the files to read. */
  files: string[];
  /** Symbolic links whose target is outside the root. */
  leavingLinks: string[];
}

function walk(root: string): Tree {
  const tree: Tree = { files: [], leavingLinks: [] };
  const real = realpathSync(root);
  const visit = (rel: string) => {
    for (const entry of readdirSync(join(root, rel), { withFileTypes: true })) {
      const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isSymbolicLink()) {
        // Its own target, not where it ends up: a link to the kit dangles
        // in a clone with nothing beside it, and still leaves the root.
        const target = resolve(
          dirname(join(root, path)),
          readlinkSync(join(root, path)),
        );
        if (outside(root, target) && outside(real, target))
          tree.leavingLinks.push(`${path} -> ${target}`);
      } else if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) visit(path);
      } else if (entry.isFile()) {
        tree.files.push(path);
      }
    }
  };
  visit('');
  return tree;
}

/** Code, config and scripts; the data under test/fixtures/ is not code. */
function isScanned(path: string): boolean {
  const ext = extname(path);
  if (CODE.has(ext)) return true;
  if (path.startsWith('test/fixtures/')) return false;
  if (CONFIG.has(ext) || ext === '.sh') return true;
  return (
    ext === '' &&
    lstatSync(join(ROOT, path)).size < 1_000_000 &&
    readFileSync(join(ROOT, path), 'utf8').startsWith('#!')
  );
}

describe('the repository stands alone', () => {
  const tree = walk(ROOT);
  const scanned = tree.files.filter(isScanned);

  it('reads the whole tree: sources, tests, benches, scripts and CI', () => {
    for (const file of [
      'package.json',
      '.ci/run',
      'scripts/seed.ts',
      'bench/live-fixtures.ts',
      'test/helpers/real-fixtures.ts',
      'test/unit/repo/stands-alone.test.ts',
      'shared/wire/inventory.ts',
      'infra/app.ts',
    ])
      expect(scanned).toContain(file);
  });

  it('no file reaches outside the repository', () => {
    const offences = scanned.flatMap((file) =>
      escapes(ROOT, file, readFileSync(join(ROOT, file), 'utf8')).map(
        (what) => `${file}: ${what}`,
      ),
    );
    expect(offences).toEqual([]);
  });

  it('no symbolic link in the tree points outside it', () => {
    expect(tree.leavingLinks).toEqual([]);
  });

  it('every fixture folder says where its files come from', () => {
    const folders = new Set(
      tree.files
        .filter((f) => f.startsWith('test/fixtures/'))
        .map((f) => dirname(f)),
    );
    expect([...folders].length).toBeGreaterThan(1);
    for (const folder of folders)
      expect(tree.files, folder).toContain(`${folder}/INDEX.md`);
  });
});

describe('escapes', () => {
  // Bad paths are assembled at run time so this file passes its own scan.
  const up = (n: number) => Array.from({ length: n }, () => '..').join('/');
  const root = '/r/repo';
  const file = 'test/unit/x.test.ts';
  const found = (text: string, path = file) => escapes(root, path, text);

  it('passes paths that stay inside', () => {
    expect(
      found(
        [
          `import { a } from '${up(2)}/shared/a.ts';`,
          `new URL('${up(1)}/fixtures/real/x.json', import.meta.url);`,
          `new URL(\`${up(1)}/fixtures/webhooks/\${name}\`, import.meta.url);`,
          `resolve(here, '..', '..');`,
          `const list = ['..', '${up(2)}', '.'];`,
        ].join('\n'),
      ),
    ).toEqual([]);
  });

  it('fails an import or a read that leaves the root', () => {
    expect(found(`import { a } from '${up(4)}/kit/a.ts';`)).toHaveLength(1);
    expect(
      found(`readFileSync(new URL("${up(4)}/kit/x.tsv", import.meta.url));`),
    ).toHaveLength(1);
    expect(found(`const dir = \`${up(5)}/kit/\${name}\`;`)).toHaveLength(1);
    const four = Array.from({ length: 4 }, () => "'..'").join(', ');
    expect(found(`resolve(here, ${four});`)).toHaveLength(1);
    expect(found(`import x from '${up(1)}';`, 'root-file.ts')).toHaveLength(1);
  });

  it('fails a shell or npm script path that leaves the root', () => {
    expect(found(`#!/bin/sh\ncat ${up(1)}/kit/x\n`, '.ci/run')).toHaveLength(1);
    expect(found('#!/bin/sh\ncd "$(dirname "$0")/.."\n', '.ci/run')).toEqual(
      [],
    );
    expect(
      found(
        JSON.stringify({ scripts: { x: `node ${up(1)}/kit/floor.mjs` } }),
        'package.json',
      ),
    ).toHaveLength(1);
  });

  it('fails an absolute path into /work and any path to the kit fixtures', () => {
    const work = ['', 'work', 'shared'].join('/');
    expect(found(`readFileSync('${work}/x.json')`)).toHaveLength(1);
    expect(found(`new URL('file://${work}/x.json')`)).toHaveLength(1);
    expect(found(`#!/bin/sh\ncat ${work}/x\n`, 'scripts/x.sh')).toHaveLength(1);
    const fixtures = ['fix', 'tures'].join('');
    expect(found(`// the kit's shared/${fixtures}/real`)).toHaveLength(1);
    expect(found(`join(repoRoot, 'shared', '${fixtures}')`)).toHaveLength(1);
    expect(found(`join(repoRoot, 'test', '${fixtures}')`)).toEqual([]);
  });
});
