/**
 * Embedded PostgreSQL as root from a private folder (mode 700, as
 * `/root/project` or a clone under `mktemp -d`): the server starts, and no
 * folder outside the project's own `.data/` changes mode or owner.
 */
import { lstat, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedPostgres } from '../../../infra/local/embedded-postgres.ts';
import { freePort } from '../../helpers/global-setup.ts';

const isRoot = process.getuid?.() === 0;
if (!isRoot) {
  console.info(
    'embedded PostgreSQL as root: skipped, this process is not root (the case needs root to run a server as the postgres user)',
  );
}

/** Every folder from `path` up to `/`. */
function parents(path: string): string[] {
  const list = [path];
  while (dirname(list[list.length - 1]!) !== list[list.length - 1]) {
    list.push(dirname(list[list.length - 1]!));
  }
  return list;
}

async function modes(paths: readonly string[]) {
  return Promise.all(
    paths.map(async (path) => {
      const info = await lstat(path);
      return { path, mode: info.mode, uid: info.uid, gid: info.gid };
    }),
  );
}

describe.runIf(isRoot)(
  'embedded PostgreSQL as root in a private folder',
  () => {
    let privateRoot: string | undefined;
    afterAll(async () => {
      if (privateRoot) await rm(privateRoot, { recursive: true, force: true });
    });

    it('starts without changing the permissions of any folder outside .data/', async () => {
      // Prepare: a project in a mode-700 folder, as mktemp -d makes it.
      privateRoot = await mkdtemp(join(tmpdir(), 'k8s-inventory-private-'));
      const project = join(privateRoot, 'project');
      await mkdir(project);
      const dataDir = join(project, '.data', 'postgres');
      const binaries = dirname(
        dirname(
          (
            (await import(
              `@embedded-postgres/${process.platform}-${process.arch}`
            )) as { postgres: string }
          ).postgres,
        ),
      );
      const watched = [
        ...new Set([...parents(project), ...parents(binaries), tmpdir()]),
      ];
      const before = await modes(watched);
      expect((await lstat(privateRoot)).mode & 0o777).toBe(0o700);
      const notices: string[] = [];

      // Act
      const server = await startEmbeddedPostgres({
        dataDir,
        port: await freePort(),
        ephemeral: true,
        onNotice: (line) => notices.push(line),
      });
      let answer: unknown;
      try {
        const client = new pg.Client({ connectionString: server.url });
        await client.connect();
        answer = (await client.query('select 1 + 1 as two')).rows[0];
        await client.end();
      } finally {
        await server.stop();
      }

      // Assess
      expect(answer).toEqual({ two: 2 });
      expect(await modes(watched)).toEqual(before);
      expect(notices.join('\n')).toContain(dataDir);
      expect(notices.join('\n')).toContain('no other permission was changed');
      expect(server.dataDir.startsWith(project)).toBe(false);
      await expect(lstat(server.dataDir)).rejects.toThrow();
    }, 120_000);
  },
);
