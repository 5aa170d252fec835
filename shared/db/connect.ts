/**
 * Where the database is, as the configuration says: DATABASE_URL locally; in
 * AWS DATABASE_HOST (RDS Proxy) with the credentials of the Secrets Manager
 * secret DATABASE_SECRET_ARN ({"username", "password"} JSON, read once per
 * cold start by the caller; through the Parameters and Secrets extension in
 * a function that has it, shared/secret-value.ts). Used where a URL rather than a pool is needed
 * (the migration runner); the process's pool is `getDb()` in shared/db/process-pool.ts.
 *
 * In AWS the connection requires TLS and verifies the server's certificate;
 * the function must trust the RDS CA (NODE_EXTRA_CA_CERTS=/var/runtime/ca-cert.pem).
 */
import type { Config } from '../config.ts';
import { readSecretString } from '../secret-value.ts';
import { readCredentialsSecret } from './login-secrets.ts';

export class DatabaseConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'DatabaseConfigError';
  }
}

/** The connection string the configuration points at (may fetch the secret). */
export async function resolveDatabaseUrl(config: Config): Promise<string> {
  if (config.DATABASE_URL) return config.DATABASE_URL;
  if (!config.DATABASE_SECRET_ARN || !config.DATABASE_HOST) {
    throw new DatabaseConfigError(
      'no database configured: set DATABASE_URL, or DATABASE_SECRET_ARN and DATABASE_HOST',
    );
  }
  const { username, password } = await readCredentialsSecret(
    (id) => readSecretString(config, id),
    config.DATABASE_SECRET_ARN,
    "the database login's",
  );
  const user = encodeURIComponent(username);
  const pass = encodeURIComponent(password);
  return `postgres://${user}:${pass}@${config.DATABASE_HOST}:${config.DATABASE_PORT}/${config.DATABASE_NAME}?sslmode=verify-full`;
}
