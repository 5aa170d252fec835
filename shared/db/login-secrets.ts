/**
 * The application logins' credentials, read from Secrets Manager for the
 * migrate step: DATABASE_LOGIN_SECRETS maps each group role to the secret
 * of its login, a JSON object with `username` and `password` as RDS writes
 * it. Errors name the group role and the secret, never a secret's value.
 */
import {
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
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
  const client =
    options.client ?? new SecretsManagerClient({ region: options.region });
  try {
    return await Promise.all(
      Object.entries(secretArns).map(async ([groupRole, arn]) => ({
        groupRole,
        ...(await readCredentialsSecret(
          client,
          arn,
          `the ${groupRole} login's`,
        )),
      })),
    );
  } finally {
    if (!options.client) client.destroy();
  }
}

/**
 * One `{"username", "password"}` secret as RDS writes it. `label` names the
 * secret's use in errors ("the database login's"); no error quotes its value.
 */
export async function readCredentialsSecret(
  client: SecretsManagerClient,
  arn: string,
  label: string,
): Promise<{ username: string; password: string }> {
  let text: string | undefined;
  try {
    const secret = await client.send(
      new GetSecretValueCommand({ SecretId: arn }),
    );
    text = secret.SecretString;
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
