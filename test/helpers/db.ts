/**
 * A database of its own for one test file, copied from the migrated template
 * that the global setup prepared.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool, type Db } from '../../shared/db/pool.ts';
import { databaseUrl } from './global-setup.ts';
import { type FunctionKind, type LoginDb, loginFor } from './logins.ts';

export interface TestDatabase {
  /** The owner's (the migrate step's) connection. */
  url: string;
  db: Db;
  /**
   * A pool as the production login of `fn` (test/helpers/logins.ts), one
   * per function, ended by `drop`.
   */
  as(fn: FunctionKind): LoginDb;
  drop(): Promise<void>;
}

/** `empty`: no migration applied (from template0), for the runner's tests. */
export async function createTestDatabase(
  options: { empty?: boolean } = {},
): Promise<TestDatabase> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('pgTemplateDb');
  // The global setup runs in the main process: its pid names the template.
  const owner = template.replace('k8s_inventory_template_', '');
  const name = `k8s_inventory_test_${owner}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(
    `create database ${name} template ${options.empty ? 'template0' : template}`,
  );
  await admin.end();
  const url = databaseUrl(adminUrl, name);
  const db = createPool({ connectionString: url, max: 8 });
  const logins = new Map<FunctionKind, LoginDb>();
  return {
    url,
    db,
    as(fn) {
      let login = logins.get(fn);
      if (!login) {
        login = loginFor(fn, { url });
        logins.set(fn, login);
      }
      return login;
    },
    async drop() {
      await Promise.all([...logins.values()].map((l) => l.db.end()));
      await db.end();
      const client = new pg.Client({ connectionString: adminUrl });
      await client.connect();
      await client.query(`drop database if exists ${name} with (force)`);
      await client.end();
    },
  };
}
