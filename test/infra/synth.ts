/**
 * Builds and synthesizes the whole CDK app the way `cdk.json` does, with
 * esbuild bundling skipped, and reads the pieces the assertions need.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CloudAssembly } from 'aws-cdk-lib/cx-api';
import {
  buildInventoryApp,
  type InventoryApp,
} from '../../infra/inventory-app.ts';
import { fromRoot } from '../../infra/paths.ts';
import { routes } from '../../shared/http/routes.ts';

/** Every entry file the app bundles; NodejsFunction needs each to exist. */
export const ENTRY_FILES = [
  'functions/sync/handler.ts',
  'functions/sweeps/stale-clusters.ts',
  'functions/sweeps/event-retention.ts',
  'functions/migrate/handler.ts',
  'functions/admin/handler.ts',
  'functions/bridge/main.ts',
  'functions/bridge/Dockerfile',
  ...routes.map((route) => `functions/api/${route.name}.ts`),
];

/** Fails with the list of entry files that are not written yet. */
export function assertEntryFilesExist(): void {
  const missing = ENTRY_FILES.filter((file) => !existsSync(fromRoot(file)));
  if (missing.length > 0) {
    throw new Error(
      `the CDK app bundles entry files that do not exist yet:\n  ${missing.join('\n  ')}`,
    );
  }
}

/** The context `cdk.json` gives the app (feature flags, parameters). */
export function cdkJsonContext(): Record<string, unknown> {
  const cdkJson = JSON.parse(readFileSync(fromRoot('cdk.json'), 'utf8')) as {
    context?: Record<string, unknown>;
  };
  return cdkJson.context ?? {};
}

export interface SynthesizedApp {
  readonly inventory: InventoryApp;
  readonly assembly: CloudAssembly;
  readonly templates: {
    readonly network: Template;
    readonly database: Template;
    readonly ingest: Template;
    readonly api: Template;
    readonly sweeps: Template;
    readonly monitoring: Template;
  };
}

/** The cdk-nag findings a failed synth wrote, one line each. */
function validationFindings(outdir: string): string {
  const path = join(outdir, 'validation-report.json');
  if (!existsSync(path)) return '(no validation report)';
  const report = JSON.parse(readFileSync(path, 'utf8')) as {
    pluginReports: {
      pluginName: string;
      violations: {
        ruleName: string;
        severity: string;
        violatingConstructs: { constructPath: string }[];
      }[];
    }[];
  };
  return report.pluginReports
    .flatMap((plugin) =>
      plugin.violations
        .filter((v) => v.severity === 'error' || v.severity === 'fatal')
        .flatMap((v) =>
          v.violatingConstructs.map(
            (c) => `${plugin.pluginName} ${v.ruleName} at ${c.constructPath}`,
          ),
        ),
    )
    .join('\n');
}

/**
 * Synthesizes the app with bundling skipped. cdk-nag runs as part of the
 * synth, so any unacknowledged finding makes this throw, listing them.
 * CloudFormation's built-in template validation is left to the CLI synth
 * test (cdk-synth.test.ts), which runs it on the real assembly.
 */
export function synthesizeApp(
  context: Record<string, unknown> = {},
): SynthesizedApp {
  assertEntryFilesExist();
  const outdir = mkdtempSync(join(tmpdir(), 'k8s-inventory-cdk-'));
  const app = new App({
    outdir,
    builtinCloudFormationValidation: false,
    context: {
      ...cdkJsonContext(),
      ...context,
      'aws:cdk:bundling-stacks': [],
    },
  });
  const inventory = buildInventoryApp(app);
  let assembly: CloudAssembly;
  try {
    assembly = app.synth();
  } catch (error) {
    throw new Error(
      `synth failed:\n${validationFindings(outdir)}\n${String(error)}`,
      { cause: error },
    );
  }
  return {
    inventory,
    assembly,
    templates: {
      network: Template.fromStack(inventory.network),
      database: Template.fromStack(inventory.database),
      ingest: Template.fromStack(inventory.ingest),
      api: Template.fromStack(inventory.api),
      sweeps: Template.fromStack(inventory.sweeps),
      monitoring: Template.fromStack(inventory.monitoring),
    },
  };
}
