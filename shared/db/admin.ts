/**
 * Server-level chores for the local stack and the operator scripts: making
 * sure the database a URL names exists before migrations run.
 */
import pg from 'pg';

export class DatabaseNameError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseNameError';
  }
}

const SAFE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/**
 * Creates the database named by `url` when the server lacks it, connecting
 * to the server's `postgres` database to do so (only then: a URL whose
 * database exists needs no rights beyond it). Returns true when created.
 */
export async function ensureDatabase(url: string): Promise<boolean> {
  const probe = new pg.Client({
    connectionString: url,
    application_name: 'ensure-database',
  });
  try {
    await probe.connect();
    return false;
  } catch (error) {
    // 3D000: invalid_catalog_name, the database does not exist.
    if ((error as { code?: string }).code !== '3D000') throw error;
  } finally {
    await probe.end().catch(() => {});
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.replace(/^\//, ''));
  if (!SAFE_NAME.test(name)) {
    throw new DatabaseNameError(
      `database name ${JSON.stringify(name)} must be lowercase letters, digits and '_'`,
    );
  }
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new pg.Client({
    connectionString: admin.toString(),
    application_name: 'ensure-database',
  });
  await client.connect();
  try {
    const { rowCount } = await client.query(
      'select 1 from pg_database where datname = $1',
      [name],
    );
    if (rowCount !== 0) return false;
    try {
      // An identifier cannot be a parameter; the name was checked above.
      await client.query(`create database ${name}`);
      return true;
    } catch (error) {
      // Another starter created it first.
      if ((error as { code?: string }).code === '42P04') return false;
      throw error;
    }
  } finally {
    await client.end();
  }
}
