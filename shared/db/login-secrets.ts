/**
 * Database logins' credentials from their Secrets Manager secrets, a JSON
 * object with `username` and `password` as RDS writes it: the application
 * logins for the migrate step (DATABASE_LOGIN_SECRETS maps each group role
 * to its login's secret; read with the SDK), and a function's own login
 * (shared/db/connect.ts, however it reads secrets). Errors name the group
 * role and the secret, never a secret's value.
 *
 * No value import of the SDK here: a function that reads its secret through
 * the Parameters and Secrets extension must not load it (shared/secret-value.ts).
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { LoginCredentials } from './roles.ts';

export class LoginSecretError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'LoginSecretError';
  }
}

export interface ReadLoginSecretsOptions {
  region: string;
  /** A client to use (tests); one is made, and destroyed, otherwise. */
  client?: SecretsManagerClient;
}

/** Every login of `secretArns` (group role → secret ARN), in that order. */
export async function readLoginSecrets(
  secretArns: Readonly<Record<string, string>>,
  options: ReadLoginSecretsOptions,
): Promise<LoginCredentials[]> {
  const { GetSecretValueCommand, SecretsManagerClient } = await import(
    '@aws-sdk/client-secrets-manager'
  );
  const client =
    options.client ?? new SecretsManagerClient({ region: options.region });
  const read = async (arn: string) =>
    (await client.send(new GetSecretValueCommand({ SecretId: arn })))
      .SecretString;
  try {
    return await Promise.all(
      Object.entries(secretArns).map(async ([groupRole, arn]) => ({
        groupRole,
        ...(await readCredentialsSecret(read, arn, `the ${groupRole} login's`)),
      })),
    );
  } finally {
    if (!options.client) client.destroy();
  }
}

/**
 * One `{"username", "password"}` secret as RDS writes it, its string read
 * by `read`. `label` names the secret's use in errors ("the database
 * login's"); no error quotes its value.
 */
export async function readCredentialsSecret(
  read: (arn: string) => Promise<string | undefined>,
  arn: string,
  label: string,
): Promise<{ username: string; password: string }> {
  let text: string | undefined;
  try {
    text = await read(arn);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new LoginSecretError(
      `cannot read ${label} secret ${arn}: ${reason}`,
      {
        cause: error,
      },
    );
  }
  return credentialsOf(text, label, arn);
}

function credentialsOf(
  text: string | undefined,
  label: string,
  arn: string,
): { username: string; password: string } {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch {
    // The parser's message may quote the value: leave it out.
    throw new LoginSecretError(`${label} secret ${arn} is not a JSON object`);
  }
  const { username, password } = (value ?? {}) as {
    username?: unknown;
    password?: unknown;
  };
  if (
    typeof username !== 'string' ||
    username === '' ||
    typeof password !== 'string' ||
    password === ''
  ) {
    throw new LoginSecretError(
      `${label} secret ${arn} lacks a username or password`,
    );
  }
  return { username, password };
}
