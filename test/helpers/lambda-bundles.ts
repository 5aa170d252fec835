/**
 * The app's Lambda functions as `cdk synth` bundles them (the CLI, offline,
 * with the local esbuild), read back from the cloud assembly: each
 * function's asset directory, handler, runtime and the environment its
 * template gives it. A synth with bundling takes a minute or more, so the
 * assembly is kept in the system's temp directory under a digest of every
 * input of the build (source, migrations, lockfile, CDK settings): the
 * bundles test and the cold-start bench synthesize once and reuse it until
 * something that goes into a bundle changes. The directory is outside the
 * repository on purpose: a bundle must not find the project's node_modules
 * by walking up from its own directory (see `runtimeModules`).
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { repoRoot } from '../../infra/paths.ts';

/** What goes into a bundle or a template; a change to any of it re-synthesizes. */
export const BUILD_INPUTS = [
  'functions',
  'shared',
  'infra',
  'migrations',
  'package-lock.json',
  'package.json',
  'cdk.json',
  'tsconfig.json',
];

/** The environment minus anything that could reach an AWS account. */
export function offlineEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!key.startsWith('AWS_') && !key.startsWith('CDK_')) env[key] = value;
  }
  const nowhere = join(tmpdir(), 'k8s-inventory-no-aws-config');
  return {
    ...env,
    AWS_CONFIG_FILE: nowhere,
    AWS_SHARED_CREDENTIALS_FILE: nowhere,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
}

function filesUnder(path: string): string[] {
  if (!existsSync(path)) return [];
  if (!statSync(path).isDirectory()) return [path];
  return readdirSync(path, { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules')
    .flatMap((entry) => filesUnder(join(path, entry.name)));
}

/** A digest of every build input's path and content, and of the checkout's place. */
export function buildDigest(): string {
  const hash = createHash('sha256').update(repoRoot);
  for (const file of BUILD_INPUTS.flatMap((p) =>
    filesUnder(join(repoRoot, p)),
  ).sort()) {
    hash
      .update(relative(repoRoot, file))
      .update('\0')
      .update(readFileSync(file));
  }
  return hash.digest('hex').slice(0, 20);
}

const CACHE_PREFIX = 'k8s-inventory-assembly-';

/** This checkout's cached assemblies share a prefix; older ones are removed. */
function checkoutPrefix(): string {
  const id = createHash('sha256').update(repoRoot).digest('hex').slice(0, 8);
  return `${CACHE_PREFIX}${id}-`;
}

function runSynth(outdir: string): void {
  const result = spawnSync(
    'npx',
    ['cdk', 'synth', '--quiet', '--no-notices', '--output', outdir],
    {
      cwd: repoRoot,
      env: offlineEnvironment(),
      encoding: 'utf8',
      timeout: 540_000,
    },
  );
  if (result.status !== 0) {
    throw new Error(
      `cdk synth failed (${result.error?.message ?? `exit ${result.status}`}):\n${result.stdout}\n${result.stderr}`,
    );
  }
}

/**
 * The `@aws-sdk/*` packages the Lambda Node.js runtime provides (the bundles
 * leave them out), and nothing else, in a node_modules beside the assets:
 * an import a bundle forgot fails here as it would in AWS.
 */
function runtimeModules(outdir: string): void {
  const modules = join(outdir, 'node_modules');
  mkdirSync(modules, { recursive: true });
  symlinkSync(
    join(repoRoot, 'node_modules', '@aws-sdk'),
    join(modules, '@aws-sdk'),
  );
}

/**
 * The directory of a cloud assembly of the whole app with every function
 * bundled: the cached one when the build inputs are unchanged, else a new
 * synth. Concurrent callers (the bundles test, the bench) wait for one build.
 */
export async function synthesizedAssembly(): Promise<string> {
  const dir = join(tmpdir(), `${checkoutPrefix()}${buildDigest()}`);
  const lock = `${dir}.lock`;
  for (;;) {
    if (existsSync(join(dir, 'manifest.json'))) return dir;
    try {
      mkdirSync(lock);
    } catch {
      // Another process is building it; a lock older than the synth's
      // own timeout was left by a killed one.
      const age =
        Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs;
      if (age > 600_000) rmSync(lock, { recursive: true, force: true });
      await sleep(1000);
      continue;
    }
    try {
      const building = `${dir}.building-${process.pid}`;
      rmSync(building, { recursive: true, force: true });
      runSynth(building);
      runtimeModules(building);
      // Older assemblies of this checkout (not one being built, nor a lock).
      for (const old of readdirSync(tmpdir())) {
        if (
          old.startsWith(checkoutPrefix()) &&
          !/\.(lock|building-\d+)$/.test(old)
        ) {
          rmSync(join(tmpdir(), old), { recursive: true, force: true });
        }
      }
      renameSync(building, dir);
      return dir;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** A CloudFormation template, as much of it as is read here. */
export interface Template {
  Parameters?: Record<string, { Default?: string }>;
  Resources: Record<
    string,
    {
      Type: string;
      Properties?: Record<string, unknown>;
      Metadata?: Record<string, unknown>;
    }
  >;
  Outputs?: Record<string, { Value: unknown; Export?: { Name: unknown } }>;
}

export interface BundledFunction {
  /** Physical name (`k8s-inventory-api-get-cluster`). */
  name: string;
  stack: string;
  logicalId: string;
  /** The asset directory: index.js, its map, and what the hooks copied. */
  dir: string;
  handler: string;
  runtime: string;
  memorySize: number;
  timeoutSeconds: number;
  /** The template's variables, intrinsics unresolved. */
  environment: Record<string, unknown>;
}

export interface Assembly {
  dir: string;
  /** Stack name → template. */
  templates: Map<string, Template>;
  /** Every function of ours (custom-resource providers CDK adds are left out). */
  functions: BundledFunction[];
}

/** Reads the stacks and their functions from an assembly directory. */
export function readAssembly(dir: string): Assembly {
  const templates = new Map<string, Template>();
  for (const file of readdirSync(dir)) {
    const match = /^(.+)\.template\.json$/.exec(file);
    if (match?.[1]) {
      templates.set(
        match[1],
        JSON.parse(readFileSync(join(dir, file), 'utf8')) as Template,
      );
    }
  }
  const functions: BundledFunction[] = [];
  for (const [stack, template] of templates) {
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      const props = resource.Properties ?? {};
      const name = props.FunctionName;
      if (resource.Type !== 'AWS::Lambda::Function' || typeof name !== 'string')
        continue;
      functions.push({
        name,
        stack,
        logicalId,
        dir: join(dir, String(resource.Metadata?.['aws:asset:path'])),
        handler: String(props.Handler),
        runtime: String(props.Runtime),
        memorySize: Number(props.MemorySize ?? 128),
        timeoutSeconds: Number(props.Timeout ?? 3),
        environment:
          (props.Environment as { Variables?: Record<string, unknown> })
            ?.Variables ?? {},
      });
    }
  }
  return { dir, templates, functions };
}

/** What an intrinsic that names something in AWS stands for here. */
export interface Stand {
  region: string;
  account: string;
  /** A stack parameter's value (templates without a default). */
  parameter(stack: string, name: string): string;
}

export const FAKE_ACCOUNT = '123456789012';

/** The ARN a secret resource gets here: its logical id names it. */
export function secretArn(stand: Stand, logicalId: string): string {
  return `arn:aws:secretsmanager:${stand.region}:${stand.account}:secret:${logicalId}-AbCdEf`;
}

/**
 * Resolves the intrinsics of a template value the way CloudFormation would,
 * with names made up for the resources: a secret's ARN from its logical id,
 * a bucket's name from its logical id (lower-cased), an attribute as
 * `{logicalId}.{attribute}`. Cross-stack reads (`Fn::GetStackOutput`,
 * `Fn::ImportValue`) follow the producing stack's outputs. Anything else
 * throws, naming it, so a new kind of value shows up here first.
 */
export function resolveIntrinsic(
  assembly: Assembly,
  stack: string,
  value: unknown,
  stand: Stand,
): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean')
    return String(value);
  const template = assembly.templates.get(stack);
  if (template === undefined) throw new Error(`no stack ${stack}`);
  const node = value as Record<string, unknown>;
  if ('Ref' in node) {
    const ref = String(node.Ref);
    const pseudo: Record<string, string> = {
      'AWS::Region': stand.region,
      'AWS::AccountId': stand.account,
      'AWS::Partition': 'aws',
      'AWS::URLSuffix': 'amazonaws.com',
      'AWS::StackName': stack,
    };
    if (pseudo[ref] !== undefined) return pseudo[ref];
    if (template.Parameters?.[ref] !== undefined) {
      return template.Parameters[ref].Default ?? stand.parameter(stack, ref);
    }
    const resource = template.Resources[ref];
    if (resource === undefined) throw new Error(`${stack}: no resource ${ref}`);
    if (resource.Type.startsWith('AWS::SecretsManager::')) {
      return secretArn(stand, ref);
    }
    if (resource.Type === 'AWS::S3::Bucket') return ref.toLowerCase();
    return ref;
  }
  if ('Fn::GetAtt' in node) {
    const [id, attribute] = node['Fn::GetAtt'] as [string, string];
    return `${id}.${attribute}`.toLowerCase();
  }
  if ('Fn::Join' in node) {
    const [separator, parts] = node['Fn::Join'] as [string, unknown[]];
    return parts
      .map((part) => resolveIntrinsic(assembly, stack, part, stand))
      .join(separator);
  }
  if ('Fn::GetStackOutput' in node) {
    const { StackName, OutputName } = node['Fn::GetStackOutput'] as {
      StackName: string;
      OutputName: string;
    };
    const output = assembly.templates.get(StackName)?.Outputs?.[OutputName];
    if (output === undefined)
      throw new Error(`no output ${OutputName} in ${StackName}`);
    return resolveIntrinsic(assembly, StackName, output.Value, stand);
  }
  if ('Fn::ImportValue' in node) {
    const name = resolveIntrinsic(
      assembly,
      stack,
      node['Fn::ImportValue'],
      stand,
    );
    for (const [producer, t] of assembly.templates) {
      for (const output of Object.values(t.Outputs ?? {})) {
        if (
          output.Export !== undefined &&
          resolveIntrinsic(assembly, producer, output.Export.Name, stand) ===
            name
        ) {
          return resolveIntrinsic(assembly, producer, output.Value, stand);
        }
      }
    }
    throw new Error(`no export ${name}`);
  }
  throw new Error(`${stack}: cannot resolve ${JSON.stringify(value)}`);
}

/** A function's variables with every intrinsic resolved. */
export function resolvedEnvironment(
  assembly: Assembly,
  fn: BundledFunction,
  stand: Stand,
): Record<string, string> {
  return Object.fromEntries(
    Object.entries(fn.environment).map(([key, value]) => [
      key,
      resolveIntrinsic(assembly, fn.stack, value, stand),
    ]),
  );
}

/**
 * The database secrets of the templates: secret ARN (as `secretArn` makes
 * it) → the username the secret is generated with. A target attachment
 * stands for the secret it attaches.
 */
export function databaseSecrets(
  assembly: Assembly,
  stand: Stand,
): Map<string, string> {
  const secrets = new Map<string, string>();
  for (const [stack, template] of assembly.templates) {
    const usernameOf = (id: string): string | undefined => {
      const generate = template.Resources[id]?.Properties
        ?.GenerateSecretString as
        | { SecretStringTemplate?: unknown }
        | undefined;
      if (generate?.SecretStringTemplate === undefined) return undefined;
      // A login's template names its master secret's ARN: an intrinsic.
      const text = resolveIntrinsic(
        assembly,
        stack,
        generate.SecretStringTemplate,
        stand,
      );
      return (JSON.parse(text) as { username?: string }).username;
    };
    for (const [id, resource] of Object.entries(template.Resources)) {
      if (resource.Type === 'AWS::SecretsManager::Secret') {
        const username = usernameOf(id);
        if (username) secrets.set(secretArn(stand, id), username);
      }
      if (resource.Type === 'AWS::SecretsManager::SecretTargetAttachment') {
        const target = (resource.Properties?.SecretId as { Ref?: string })?.Ref;
        const username = target === undefined ? undefined : usernameOf(target);
        if (username) secrets.set(secretArn(stand, id), username);
      }
    }
  }
  return secrets;
}
