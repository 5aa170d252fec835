/**
 * The cold-start floor (bench/coldstart.ts): a Lambda handler that runs
 * `select 1` through pg and nothing else, bundled as every function is, and
 * connected the way they are (TLS, verify-full) to the same server.
 */
import pg from 'pg';

let pool: pg.Pool | undefined;

export const handler = async (): Promise<unknown> => {
  pool ??= new pg.Pool({
    connectionString: process.env.FLOOR_DATABASE_URL,
    max: 1,
  });
  const { rows } = await pool.query('select 1 as one');
  return rows[0];
};
