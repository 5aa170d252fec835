import {
  cp,
  mkdtemp,
  readdir,
  readFile,
  rm,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../../shared/db/migrate.ts';
import { query } from '../../../shared/db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';

describe('migrate', () => {
  let database: TestDatabase;
  let dir: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    dir = await mkdtemp(join(tmpdir(), 'migrations-'));
    await cp('migrations', dir, { recursive: true });
  });
  afterAll(async () => {
    await database.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it('applies nothing twice when two runners start at once', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id int primary key);',
    );

    // Act
    const results = await Promise.all([
      migrate(database.url, dir),
      migrate(database.url, dir),
    ]);

    // Assess
    const appliedNames = results.flatMap((r) => r.applied);
    expect(appliedNames).toEqual(['9001_probe.sql']);
    const rows = await query(
      database.db,
      `select name from schema_migrations where name = '9001_probe.sql'`,
    );
    expect(rows).toHaveLength(1);
  });

  it('refuses to run when a landed migration was edited', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id bigint primary key);',
    );

    // Act
    const attempt = migrate(database.url, dir);

    // Assess
    await expect(attempt).rejects.toThrow(/9001_probe\.sql was changed/);
  });

  it('takes a database that applied the superseded text of 0005, and brings it to the same schema', async () => {
    // Prepare: 0005 as it landed for a while (then restored; 0010 carries
    // its changes), applied to a database of its own.
    const other = await createTestDatabase({ empty: true });
    const earlier = await mkdtemp(join(tmpdir(), 'migrations-0005-'));
    try {
      await cp('migrations', earlier, { recursive: true });
      const restored = await readFile(
        join(earlier, '0005_rollups.sql'),
        'utf8',
      );
      const superseded = restored
        .replace(
          'a missing reason as "Unknown": the 10 most frequent, then by reason.',
          'a missing reason as "Unknown": every reason, most frequent first, then\n--   by reason (the summary caps the list it returns).',
        )
        .replace(
          '-- indexes instead of every pod and workload of the cluster.',
          "-- indexes instead of every pod and workload of the cluster (the not-ready\n-- workloads' whole answer is in theirs).",
        )
        .replace(
          '  on k8s_workloads (cluster_id)\n  where',
          '  on k8s_workloads (cluster_id)\n  include (id, kind, namespace, name, replicas_ready, replicas_desired)\n  where',
        )
        .replace(
          '             group by reason\n             order by n desc, reason\n             limit 10) r',
          '             group by reason) r',
        );
      await writeFile(join(earlier, '0005_rollups.sql'), superseded);
      // The database stops at 0005, as one did then: every later file
      // (0029 replaces 0010's index) is applied in order by the Act.
      for (const name of await readdir(earlier)) {
        if (/^\d{4}_/.test(name) && name >= '0006') {
          await rm(join(earlier, name));
        }
      }
      await migrate(other.url, earlier);

      // Act
      const result = await migrate(other.url, 'migrations');

      // Assess
      expect(result.applied).toContain('0010_rollups_every_waiting_reason.sql');
      // 0010's index was replaced by 0029's, in the summary's order.
      const [index] = await query<{ definition: string }>(
        other.db,
        `select pg_get_indexdef('idx_k8s_workloads_not_ready_ordered'::regclass) as definition`,
      );
      expect(index?.definition).toContain(
        '(cluster_id, ((replicas_desired - COALESCE(replicas_ready, 0))) DESC, namespace, kind, name, id)',
      );
    } finally {
      await other.drop();
      await rm(earlier, { recursive: true, force: true });
    }
  });

  it('rolls a failing migration back whole', async () => {
    // Prepare
    await writeFile(
      join(dir, '9001_probe.sql'),
      'create table migrate_probe (id int primary key);',
    );
    await writeFile(
      join(dir, '9002_broken.sql'),
      'create table half_done (id int); select no_such_function();',
    );

    // Act
    const attempt = migrate(database.url, dir);

    // Assess
    await expect(attempt).rejects.toThrow(/9002_broken\.sql failed/);
    const rows = await query(
      database.db,
      `select to_regclass('half_done') as table_name`,
    );
    expect(rows[0]?.table_name).toBeNull();
  });
});
