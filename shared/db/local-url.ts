/**
 * Where the operator scripts (`npm run grant`, ...) find the local stack's
 * database: DATABASE_URL when set, else the embedded server the local stack
 * runs, by convention `postgres://postgres:postgres@127.0.0.1:5433/<DATABASE_NAME>`
 * (DATABASE_NAME defaults to `inventory`). Port 5433 keeps it clear of a
 * system PostgreSQL on 5432.
 */
import { type Config, getConfig } from '../config.ts';

export const LOCAL_DATABASE_PORT = 5433;

export function localDatabaseUrl(config: Config = getConfig()): string {
  return (
    config.DATABASE_URL ??
    `postgres://postgres:postgres@127.0.0.1:${LOCAL_DATABASE_PORT}/${config.DATABASE_NAME}`
  );
}
