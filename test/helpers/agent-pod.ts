/**
 * The cluster agent run as infra/agent/deployment.yaml runs it in a pod, so
 * a test sees what the pod's process sees, not what the test's own user
 * does:
 *
 * - The image: functions/agent/Dockerfile's esbuild command (its own
 *   arguments, read from the file) bundles the agent into a folder of its
 *   own, run by the final stage's CMD with its ENV, from its WORKDIR.
 * - The Secret volumes: each file written as the kubelet writes it
 *   (pkg/volume/secret and util/atomic_writer.go): owned by root, mode from
 *   the item's `mode` or the volume's `defaultMode` (0644 when unset), in a
 *   timestamped folder behind the `..data` link; then, with the pod's
 *   `fsGroup`, SetVolumeOwnership (pkg/volume/volume_linux.go): every file
 *   and folder's group becomes fsGroup, files gain group read (0440, a
 *   Secret volume being read-only), folders also group search and setgid.
 * - The process: the manifest's runAsUser and runAsGroup, with fsGroup and
 *   supplementalGroups as its supplementary groups, as the container runtime
 *   starts it; its environment from the ConfigMaps `envFrom` names and the
 *   container's `env`, paths under a volume's mountPath pointed at where
 *   that volume was laid out here.
 *
 * Changing user and groups needs root (CI runs as root): `cannotRunAsPod` says
 * why not otherwise, for the test to skip with.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  chmod,
  chown,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import yaml from 'js-yaml';
import type { IDeployment } from 'kubernetes-models/apps/v1/Deployment';
import type { IContainer } from 'kubernetes-models/v1/Container';
import { fromRoot } from '../../infra/paths.ts';

const DEPLOYMENT = 'infra/agent/deployment.yaml';
const DOCKERFILE = 'functions/agent/Dockerfile';

/** A Secret volume's files' mode when the manifest sets none (the API's default). */
const SECRET_DEFAULT_MODE = 0o644;
/** SetVolumeOwnership's masks for a read-only volume. */
const READ_ONLY_MASK = 0o440;
const DIRECTORY_MASK = 0o2110;

/**
 * YAML 1.1's integers as kubectl reads a manifest (sigs.k8s.io/yaml): `0440`
 * is octal, 288. js-yaml reads YAML 1.2, where it is 440 decimal (0o670), so
 * its int type is extended by the leading-zero form (for loading only).
 */
const yaml11Schema = (() => {
  const int = (yaml as unknown as { types: { int: yaml.Type } }).types.int;
  const octal = /^[-+]?0[0-7_]+$/;
  return yaml.DEFAULT_SCHEMA.extend({
    implicit: [
      new yaml.Type('tag:yaml.org,2002:int', {
        kind: 'scalar',
        resolve: (data: string) => octal.test(data) || int.resolve(data),
        construct: (data: string) =>
          octal.test(data)
            ? Number.parseInt(data.replace(/_/g, ''), 8)
            : int.construct(data),
      }),
    ],
  });
})();

/** The agent's Deployment as the API server would store it from kubectl apply. */
export async function readAgentDeployment(
  file = fromRoot(DEPLOYMENT),
): Promise<IDeployment> {
  const deployment = yaml.load(await readFile(file, 'utf8'), {
    schema: yaml11Schema,
  }) as IDeployment;
  if (deployment?.kind !== 'Deployment') {
    throw new Error(`${file} holds no Deployment`);
  }
  return deployment;
}

/** Who the pod's process runs as. */
export interface PodUser {
  uid: number;
  gid: number;
  /** Supplementary groups: fsGroup, then supplementalGroups. */
  groups: number[];
}

function podSpec(deployment: IDeployment) {
  const spec = deployment.spec?.template.spec;
  if (!spec) throw new Error('the Deployment has no pod template');
  return spec;
}

function agentContainer(deployment: IDeployment): IContainer {
  const [container, ...others] = podSpec(deployment).containers;
  if (!container || others.length > 0) {
    throw new Error('the Deployment runs other than one container');
  }
  return container;
}

/** The user, group and supplementary groups the runtime starts the container's process with. */
export function podUser(deployment: IDeployment): PodUser {
  const pod = podSpec(deployment).securityContext ?? {};
  const container = agentContainer(deployment).securityContext ?? {};
  const uid = container.runAsUser ?? pod.runAsUser;
  const gid = container.runAsGroup ?? pod.runAsGroup;
  // Unset, the runtime would take them from the image's /etc/passwd, which
  // this does not model.
  if (uid === undefined || gid === undefined) {
    throw new Error('the Deployment sets no runAsUser or no runAsGroup');
  }
  if ((container.runAsNonRoot ?? pod.runAsNonRoot) && uid === 0) {
    throw new Error('runAsNonRoot with runAsUser 0: the kubelet refuses it');
  }
  const groups = [
    ...(pod.fsGroup === undefined ? [] : [pod.fsGroup]),
    ...(pod.supplementalGroups ?? []),
  ];
  return { uid, gid, groups: [...new Set(groups)] };
}

/**
 * Why this process cannot run a command as another user with supplementary
 * groups; undefined when it can (root, with util-linux's setpriv).
 */
export function cannotRunAsPod(): string | undefined {
  if (process.getuid?.() !== 0) {
    return 'running as the manifest runs the agent (another uid, its fsGroup as a supplementary group, root-owned Secret files) needs root; CI runs as root';
  }
  if (spawnSync('setpriv', ['--version']).error) {
    return 'setpriv (util-linux) is not installed: node cannot start a process with supplementary groups';
  }
  return undefined;
}

/** setpriv's arguments that run `command` as `user`, as the container runtime starts it. */
function setprivArgs(
  user: PodUser,
  noNewPrivileges: boolean,
  command: readonly string[],
): string[] {
  return [
    `--reuid=${user.uid}`,
    `--regid=${user.gid}`,
    user.groups.length > 0
      ? `--groups=${user.groups.join(',')}`
      : '--clear-groups',
    ...(noNewPrivileges ? ['--no-new-privs'] : []),
    '--',
    ...command,
  ];
}

/**
 * Lays out the Secret volume `volumeName` under `target` as the kubelet
 * does, from the Secret's data (key → content). Must run as root.
 */
export async function mountSecretVolume(
  deployment: IDeployment,
  volumeName: string,
  data: Record<string, string>,
  target: string,
): Promise<void> {
  const spec = podSpec(deployment);
  const source = spec.volumes?.find((v) => v.name === volumeName)?.secret;
  if (!source) throw new Error(`no Secret volume ${volumeName}`);
  const defaultMode = source.defaultMode ?? SECRET_DEFAULT_MODE;
  const files = source.items
    ? source.items.flatMap((item) => {
        const content = data[item.key];
        if (content !== undefined) {
          return [{ path: item.path, content, mode: item.mode ?? defaultMode }];
        }
        if (source.optional) return [];
        throw new Error(`the Secret has no key ${item.key}`);
      })
    : Object.entries(data).map(([path, content]) => ({
        path,
        content,
        mode: defaultMode,
      }));

  // The volume: an emptyDir on tmpfs, mode 0777 (emptyDir's setupDir).
  await mkdir(target, { recursive: true });
  await chmod(target, 0o777);
  // AtomicWriter: the files in a timestamped folder (0755), `..data` its
  // link, and each top-level name a link through `..data`.
  const stamp = new Date().toISOString().replace(/\D/g, '_').slice(0, 19);
  const tsDir = await mkdtemp(join(target, `..${stamp}.`));
  await chmod(tsDir, 0o755);
  for (const file of files) {
    const path = join(tsDir, file.path);
    await mkdir(dirname(path), { recursive: true });
    await chmodUpTo(dirname(path), tsDir, 0o755);
    await writeFile(path, file.content, { mode: file.mode });
    await chmod(path, file.mode);
  }
  await symlink(basename(tsDir), join(target, '..data'));
  for (const top of new Set(files.map((f) => f.path.split('/')[0]!))) {
    await symlink(join('..data', top), join(target, top));
  }

  const fsGroup = spec.securityContext?.fsGroup;
  if (fsGroup !== undefined) await setVolumeOwnership(target, fsGroup);
}

/** Sets `mode` on `dir` and each folder above it up to `stop`, whatever the umask. */
async function chmodUpTo(dir: string, stop: string, mode: number) {
  for (let at = dir; at !== stop && at !== dirname(at); at = dirname(at)) {
    await chmod(at, mode);
  }
}

/** SetVolumeOwnership for a read-only volume: links skipped, the root last. */
async function setVolumeOwnership(path: string, fsGroup: number) {
  const info = await lstat(path);
  if (info.isSymbolicLink()) return;
  if (info.isDirectory()) {
    for (const name of await readdir(path)) {
      await setVolumeOwnership(join(path, name), fsGroup);
    }
  }
  await chown(path, info.uid, fsGroup);
  const mask = info.isDirectory()
    ? READ_ONLY_MASK | DIRECTORY_MASK
    : READ_ONLY_MASK;
  await chmod(path, (info.mode & 0o7777) | mask);
}

/** What the Dockerfile builds and runs. */
interface ImageRecipe {
  /** esbuild's arguments after `esbuild@<version>`. */
  esbuild: string[];
  /** The final stage's ENV, WORKDIR and CMD. */
  env: Record<string, string>;
  workdir: string;
  cmd: string[];
}

/** Splits a shell line into words, honouring single and double quotes. */
function shellWords(line: string): string[] {
  return [...line.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)].map(
    (m) => m[1] ?? m[2] ?? m[3]!,
  );
}

async function readImageRecipe(
  file = fromRoot(DOCKERFILE),
): Promise<ImageRecipe> {
  const lines = (await readFile(file, 'utf8'))
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const finalStage = lines.slice(lines.findLastIndex((l) => /^FROM\s/.test(l)));
  const words = lines
    .filter((l) => l.startsWith('RUN '))
    .map(shellWords)
    .find((w) => w.some((x) => x.startsWith('esbuild@')));
  const cmd = finalStage.find((l) => l.startsWith('CMD '));
  const workdir = finalStage.findLast((l) => l.startsWith('WORKDIR '));
  if (!words || !cmd || !workdir) {
    throw new Error(`${file}: no esbuild RUN, CMD or WORKDIR`);
  }
  const env: Record<string, string> = {};
  for (const line of finalStage.filter((l) => l.startsWith('ENV '))) {
    for (const pair of shellWords(line.slice(4))) {
      const [key, ...value] = pair.split('=');
      env[key!] = value.join('=');
    }
  }
  return {
    esbuild: words.slice(words.findIndex((x) => x.startsWith('esbuild@')) + 1),
    env,
    workdir: workdir.slice('WORKDIR '.length).trim(),
    cmd: JSON.parse(cmd.slice(4)) as string[],
  };
}

/** Runs the recipe's esbuild (the image's build stage), its output put in `outDir`. */
function buildImageBundle(recipe: ImageRecipe, outDir: string): void {
  const args = recipe.esbuild.map((arg) => {
    const out = /^--outfile=(.*)$/.exec(arg)?.[1];
    return out ? `--outfile=${join(outDir, basename(out))}` : arg;
  });
  const esbuild = join(
    dirname(createRequire(import.meta.url).resolve('esbuild')),
    '..',
    'bin',
    'esbuild',
  );
  const build = spawnSync(esbuild, args, {
    cwd: fromRoot('.'),
    encoding: 'utf8',
  });
  if (build.status !== 0) {
    throw new Error(`esbuild failed:\n${build.stderr}${build.error ?? ''}`);
  }
}

/**
 * The agent bundled as functions/agent/Dockerfile bundles it, into
 * `outDir`: the path of the file the image's CMD runs.
 */
export async function bundleAgentImage(outDir: string): Promise<string> {
  const recipe = await readImageRecipe();
  buildImageBundle(recipe, outDir);
  const entry = recipe.cmd.find((word) => word.endsWith('.mjs'));
  if (!entry) throw new Error('the image CMD names no .mjs file');
  return join(outDir, entry);
}

/** A run of the agent: its exit code and stderr. */
export interface PodRun {
  code: number;
  stderr: string;
}

export interface AgentPodOptions {
  /** The Secrets the pod's volumes name: Secret name → key → content. */
  secrets: Record<string, Record<string, string>>;
  /**
   * The apiserver's kubeconfig, set as KUBECONFIG: it stands in for the
   * service account token the kubelet mounts world-readable (a projected
   * volume's 0644), which in-cluster config reads from a fixed path.
   */
  kubeconfig: string;
  deploymentFile?: string;
}

export interface RunOptions {
  /** The ConfigMaps `envFrom` names: name → key → value. */
  configMaps?: Record<string, Record<string, string>>;
  /** Set last, over the manifest's (LOG_LEVEL, say). */
  env?: Record<string, string>;
}

export interface AgentPod {
  user: PodUser;
  /** Where each of the container's mountPaths is laid out here. */
  mounts: Record<string, string>;
  /** The image's CMD followed by `args`, as the pod's process. */
  run(args: readonly string[], options?: RunOptions): Promise<PodRun>;
  remove(): Promise<void>;
}

/**
 * Whether `user` can run `node` and read `file`; the reason when not.
 */
function readableBy(
  user: PodUser,
  node: string,
  file: string,
): string | undefined {
  const check = spawnSync(
    'setpriv',
    setprivArgs(user, false, [
      node,
      '-e',
      `require('node:fs').accessSync(${JSON.stringify(file)}, 4)`,
    ]),
    { encoding: 'utf8' },
  );
  return check.status === 0
    ? undefined
    : `${check.stderr}${check.error ?? ''}`.trim();
}

/**
 * Builds the agent's image into a folder of its own, lays out the pod's
 * Secret volumes, and runs the agent as the Deployment's pod would. Must
 * run as root (cannotRunAsPod).
 */
export async function agentPod(options: AgentPodOptions): Promise<AgentPod> {
  const deployment = await readAgentDeployment(options.deploymentFile);
  const user = podUser(deployment);
  const container = agentContainer(deployment);
  const recipe = await readImageRecipe();
  // Everything the pod's user reads is under this folder, 0755 from the
  // top: the repository may sit in a root-only folder (CI clones into a
  // mode-700 one as root), where uid 1000 could read neither the
  // TypeScript sources nor node_modules and the agent would fail for that,
  // not for what the manifest does. The image has the same shape: one
  // bundled file, no checkout.
  const root = await mkdtemp(join(tmpdir(), 'agent-pod-'));
  try {
    await chmod(root, 0o755);
    const app = join(root, 'image', recipe.workdir);
    await mkdir(app, { recursive: true });
    await chmodUpTo(app, root, 0o755);

    // The build stage's esbuild, its output folder the image's WORKDIR.
    buildImageBundle(recipe, app);
    for (const name of await readdir(app)) await chmod(join(app, name), 0o644);
    const entry = recipe.cmd.find((word) => word.endsWith('.mjs'));
    if (!entry) throw new Error('the image CMD names no .mjs file');

    // The same node as this process, copied when the pod's user cannot run
    // it where it is (scripts/node22's, inside the checkout).
    let node = process.execPath;
    if (readableBy(user, node, join(app, entry))) {
      node = join(root, 'node');
      await copyFile(process.execPath, node);
      await chmod(node, 0o755);
      const why = readableBy(user, node, join(app, entry));
      if (why) {
        throw new Error(
          `uid ${user.uid} cannot run node or read ${app} (TMPDIR in a private folder?): ${why}`,
        );
      }
    }

    const mounts: Record<string, string> = {};
    for (const mount of container.volumeMounts ?? []) {
      const volume = podSpec(deployment).volumes?.find(
        (v) => v.name === mount.name,
      );
      if (!volume?.secret) {
        throw new Error(
          `volume ${mount.name}: only Secret volumes are laid out`,
        );
      }
      const data = options.secrets[volume.secret.secretName ?? ''];
      if (!data) {
        if (volume.secret.optional) continue;
        // The kubelet would not start the container.
        throw new Error(`no Secret ${volume.secret.secretName} given`);
      }
      mounts[mount.mountPath] = join(root, 'volumes', mount.name);
      await mkdir(join(root, 'volumes'), { recursive: true });
      await chmod(join(root, 'volumes'), 0o755);
      await mountSecretVolume(
        deployment,
        mount.name,
        data,
        mounts[mount.mountPath]!,
      );
    }
    const kubeconfig = join(root, 'kubeconfig');
    await writeFile(kubeconfig, options.kubeconfig, { mode: 0o644 });
    await chmod(kubeconfig, 0o644);

    /** A path in the container, as laid out here. */
    const local = (value: string) => {
      for (const [mountPath, dir] of Object.entries(mounts)) {
        const rel = relative(mountPath, value);
        if (rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'))) {
          return join(dir, rel);
        }
      }
      return value;
    };

    const noNewPrivileges =
      container.securityContext?.allowPrivilegeEscalation === false;

    return {
      user,
      mounts,
      run(runArgs, runOptions = {}) {
        const env: Record<string, string> = {
          PATH: process.env.PATH ?? '/usr/bin:/bin',
          ...recipe.env,
        };
        for (const from of container.envFrom ?? []) {
          const name = from.configMapRef?.name;
          const data = name ? runOptions.configMaps?.[name] : undefined;
          if (!data && !from.configMapRef?.optional) {
            throw new Error(`no ConfigMap ${name} given`);
          }
          for (const [k, v] of Object.entries(data ?? {})) {
            env[`${from.prefix ?? ''}${k}`] = local(v);
          }
        }
        for (const variable of container.env ?? []) {
          if (variable.value === undefined) {
            throw new Error(`env ${variable.name}: only values are modelled`);
          }
          env[variable.name] = local(variable.value);
        }
        Object.assign(env, { KUBECONFIG: kubeconfig }, runOptions.env);
        const command = setprivArgs(user, noNewPrivileges, [
          ...recipe.cmd.map((word, i) => (i === 0 ? node : word)),
          ...runArgs,
        ]);
        return new Promise((resolve, reject) => {
          const child = spawn('setpriv', command, {
            cwd: app,
            env,
            stdio: ['ignore', 'ignore', 'pipe'],
            timeout: 60_000,
          });
          let stderr = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            stderr += chunk;
          });
          child.on('error', reject);
          child.on('close', (code, signal) =>
            resolve({ code: code ?? (signal ? 128 : 1), stderr }),
          );
        });
      },
      remove: () => rm(root, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(root, { recursive: true, force: true });
    throw error;
  }
}
