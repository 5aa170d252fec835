/**
 * Integration tests' global setup: a PostgreSQL server (DATABASE_URL's when
 * given, else an embedded one) and a template database migrated once. Each
 * test file copies the template (test/helpers/db.ts), because the sync
 * commits and its lock tests need several connections.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../../infra/local/embedded-postgres.ts';
import { migrate } from '../../shared/db/migrate.ts';
import { createPool } from '../../shared/db/pool.ts';
import { ensureRolesAndGrants } from '../../shared/db/roles.ts';
import { freePort } from '../../shared/process/supervise.ts';
import { dropRunRoles, RUN_ROLE, type RunLogins, runLogins } from './logins.ts';

export { freePort };

declare module 'vitest' {
  export interface ProvidedContext {
    pgAdminUrl: string;
    pgTemplateDb: string;
    /** The run's group roles' prefix and its logins (test/helpers/logins.ts). */
    pgRunLogins: RunLogins;
  }
}

export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** The databases a test run names after its process id. */
const RUN_DATABASE = /^k8s_inventory_(?:template|test)_(\d+)(?:_|$)/;

function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return ['127.0.0.1', 'localhost', '[::1]', ''].includes(host);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it runs, as another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Drops what earlier runs on this machine left behind when they were killed
 * before their teardown: databases named after a process that is gone. Only
 * on a server on this machine, where those process ids mean something.
 */
async function dropOrphans(admin: pg.Client): Promise<void> {
  const { rows } = await admin.query<{ datname: string }>(
    `select datname from pg_database
     where datname like 'k8s_inventory_template_%'
        or datname like 'k8s_inventory_test_%'`,
  );
  for (const { datname } of rows) {
    const pid = Number(RUN_DATABASE.exec(datname)?.[1]);
    if (!pid || isRunning(pid)) continue;
    await admin.query(`drop database if exists ${datname} with (force)`);
  }
  // The roles of those runs, once their databases (and grants) are gone.
  const roles = await admin.query<{ rolname: string }>(
    `select rolname from pg_roles where rolname ~ '^kinv[0-9]+_'`,
  );
  const deadPrefixes = new Set<string>();
  for (const { rolname } of roles.rows) {
    const pid = Number(RUN_ROLE.exec(rolname)?.[1]);
    if (pid && !isRunning(pid)) deadPrefixes.add(`kinv${pid}_`);
  }
  for (const prefix of deadPrefixes) {
    await dropRunRoles(admin, prefix).catch(() => {});
  }
}

export default async function setup(project: TestProject) {
  let adminUrl = process.env.DATABASE_URL;
  let stopServer: (() => Promise<void>) | undefined;
  let dataRoot: string | undefined;
  if (!adminUrl) {
    dataRoot = await mkdtemp(join(tmpdir(), 'k8s-inventory-pg-'));
    const server = await startEmbeddedPostgres({
      dataDir: join(dataRoot, 'data'),
      port: await freePort(),
      ephemeral: true,
    });
    adminUrl = server.url;
    stopServer = server.stop;
  }
  const template = `k8s_inventory_template_${process.pid}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  if (isLoopback(adminUrl)) await dropOrphans(admin);
  await admin.query(`drop database if exists ${template}`);
  await admin.query(`create database ${template}`);
  await admin.end();
  await migrate(databaseUrl(adminUrl, template), 'migrations');
  // Every function's login, granted as the migrate step grants them in AWS.
  // The grants are the template's, so each test file's copy has them; the
  // roles are the server's, so the run's names carry its process id.
  const logins = runLogins(process.pid, adminUrl);
  const templateDb = createPool({
    connectionString: databaseUrl(adminUrl, template),
    max: 1,
  });
  try {
    await ensureRolesAndGrants(templateDb, Object.values(logins.logins), {
      rolePrefix: logins.rolePrefix,
    });
  } finally {
    await templateDb.end();
  }

  project.provide('pgAdminUrl', adminUrl);
  project.provide('pgTemplateDb', template);
  project.provide('pgRunLogins', logins);

  return async () => {
    const client = new pg.Client({ connectionString: adminUrl });
    await client.connect();
    // Drop what the test files left behind (a failed file may not clean up).
    const { rows } = await client.query<{ datname: string }>(
      `select datname from pg_database where datname like $1 or datname = $2`,
      [`k8s_inventory_test_${process.pid}_%`, template],
    );
    for (const row of rows) {
      await client.query(`drop database if exists ${row.datname} with (force)`);
    }
    // A role still granted something elsewhere stays: the next run's setup
    // drops it (dropOrphans), once this process is gone.
    await dropRunRoles(client, logins.rolePrefix).catch(() => {});
    await client.end();
    await stopServer?.();
    if (dataRoot) await rm(dataRoot, { recursive: true, force: true });
  };
}
