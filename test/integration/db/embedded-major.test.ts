/**
 * Embedded PostgreSQL refuses a data folder another major initialised (a
 * local stack's `.data/postgres` from before the package moved to
 * production's major), naming the folder and both majors, before it
 * touches the folder or starts anything.
 */
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../infra/local/embedded-postgres.ts';
import { freePort } from '../../helpers/global-setup.ts';

describe('embedded PostgreSQL on a data folder of another major', () => {
  let root: string | undefined;
  afterAll(async () => {
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('refuses it, naming the folder and both majors, and leaves it as it was', async () => {
    root = await mkdtemp(join(tmpdir(), 'k8s-inventory-major-'));
    const dataDir = join(root, '.data', 'postgres');
    await mkdir(dataDir, { recursive: true });
    await writeFile(join(dataDir, 'PG_VERSION'), '15\n');

    const started = startEmbeddedPostgres({
      dataDir,
      port: await freePort(),
      ephemeral: true,
    });

    await expect(started).rejects.toThrow(
      `${dataDir} holds a PostgreSQL 15 database, and the embedded server is PostgreSQL 16`,
    );
    expect(await readdir(dataDir)).toEqual(['PG_VERSION']);
  });
});
