/**
 * The CDK CLI, as CI and users run it: `cdk synth` from cdk.json, offline,
 * with no AWS credentials, bundling with the local esbuild and running
 * CloudFormation's built-in template validation and cdk-nag. To stay near a
 * minute on a small CI runner it bundles the stacks with the sync, sweep,
 * migrate and admin functions and the bridge image; the API stack's
 * functions use the same ServiceFunction bundling, and app.test.ts asserts
 * their templates.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../infra/paths.ts';
import { offlineEnvironment } from '../helpers/lambda-bundles.ts';
import { assertEntryFilesExist } from './synth.ts';

const PREFIX = 'k8s-inventory';
const BUNDLED_STACKS = ['database', 'ingest', 'sweeps'].map(
  (s) => `${PREFIX}-${s}`,
);
const ALL_STACKS = [
  'network',
  'database',
  'ingest',
  'api',
  'sweeps',
  'monitoring',
].map((s) => `${PREFIX}-${s}`);

interface LambdaResource {
  Type: string;
  Properties: { FunctionName?: unknown };
  Metadata?: Record<string, string>;
}

/** Physical function name → the asset directory CDK staged for it. */
function functionAssets(outdir: string, stack: string): Map<string, string> {
  const template = JSON.parse(
    readFileSync(join(outdir, `${stack}.template.json`), 'utf8'),
  ) as { Resources: Record<string, LambdaResource> };
  const assets = new Map<string, string>();
  for (const resource of Object.values(template.Resources)) {
    const name = resource.Properties.FunctionName;
    const path = resource.Metadata?.['aws:asset:path'];
    if (resource.Type === 'AWS::Lambda::Function' && typeof name === 'string') {
      assets.set(name, join(outdir, path ?? ''));
    }
  }
  return assets;
}

let outdir: string;
let result: ReturnType<typeof spawnSync>;
let seconds: number;

beforeAll(() => {
  // Prepare
  assertEntryFilesExist();
  outdir = mkdtempSync(join(tmpdir(), 'k8s-inventory-cdk-cli-'));

  // Act
  const started = Date.now();
  result = spawnSync(
    'npx',
    [
      'cdk',
      'synth',
      '--quiet',
      '--no-notices',
      '--output',
      outdir,
      '--exclusively',
      ...BUNDLED_STACKS,
    ],
    {
      cwd: repoRoot,
      env: offlineEnvironment(),
      encoding: 'utf8',
      timeout: 280_000,
    },
  );
  seconds = (Date.now() - started) / 1000;
}, 300_000);

describe('cdk synth', () => {
  it('succeeds offline with no AWS credentials', () => {
    // Assess
    expect(result.error).toBeUndefined();
    expect(result.status, `${result.stdout}\n${result.stderr}`).toBe(0);
    for (const stack of ALL_STACKS) {
      expect(existsSync(join(outdir, `${stack}.template.json`)), stack).toBe(
        true,
      );
    }
    // Recorded for whoever tunes CI; the bound only catches a runaway.
    expect(seconds).toBeLessThan(280);
  });

  it('bundles each function into a CommonJS file with its source map', () => {
    const bundled = BUNDLED_STACKS.flatMap((stack) => [
      ...functionAssets(outdir, stack).entries(),
    ]);
    expect(bundled.map(([name]) => name).sort()).toEqual(
      [
        `${PREFIX}-admin`,
        `${PREFIX}-migrate`,
        `${PREFIX}-sweep-event-retention`,
        `${PREFIX}-sweep-stale-clusters`,
        `${PREFIX}-sync`,
      ].sort(),
    );
    for (const [name, dir] of bundled) {
      const files = readdirSync(dir);
      expect(files, name).toContain('index.js');
      expect(files, name).toContain('index.js.map');
      // CommonJS: no top-level import or export (in ESM, a package left
      // out would be loaded eagerly; see BUNDLE).
      const code = readFileSync(join(dir, 'index.js'), 'utf8');
      expect(code, name).not.toMatch(/^(import|export)[\s{*]/m);
      expect(files, name).not.toContain('node_modules');
    }
  });

  it('ships migrations/ inside the migrate bundle', () => {
    const dir = functionAssets(outdir, `${PREFIX}-database`).get(
      `${PREFIX}-migrate`,
    )!;
    const shipped = readdirSync(join(dir, 'migrations'));
    const source = readdirSync(join(repoRoot, 'migrations')).filter((f) =>
      f.endsWith('.sql'),
    );
    expect(source.length).toBeGreaterThan(0);
    for (const file of source) expect(shipped, file).toContain(file);
  });

  it('stages the bridge image from a small build context', () => {
    const manifest = JSON.parse(
      readFileSync(join(outdir, `${PREFIX}-ingest.assets.json`), 'utf8'),
    ) as {
      dockerImages: Record<string, { source: { directory: string } }>;
    };
    const images = Object.values(manifest.dockerImages);
    expect(images).toHaveLength(1);
    const context = readdirSync(join(outdir, images[0]!.source.directory));
    expect(context.sort()).toEqual(
      [
        'functions',
        'package-lock.json',
        'package.json',
        'shared',
        'tsconfig.json',
      ].sort(),
    );
  });
});
