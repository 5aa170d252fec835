import {
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import { afterEach, describe, expect, it } from 'vitest';
import {
  LoginSecretError,
  readLoginSecrets,
} from '../../../shared/db/login-secrets.ts';

const ARN = (name: string) =>
  `arn:aws:secretsmanager:eu-west-1:123456789012:secret:${name}-AbCdEf`;

describe('readLoginSecrets', () => {
  const secrets = mockClient(SecretsManagerClient);
  const client = new SecretsManagerClient({ region: 'eu-west-1' });
  afterEach(() => secrets.reset());

  it('reads each login as its group role, username and password', async () => {
    // Prepare
    secrets
      .on(GetSecretValueCommand, { SecretId: ARN('sync') })
      .resolves({
        SecretString: JSON.stringify({
          username: 'inventory_sync',
          password: 's3cret',
          engine: 'postgres',
        }),
      })
      .on(GetSecretValueCommand, { SecretId: ARN('api') })
      .resolves({
        SecretString: JSON.stringify({
          username: 'inventory_api_clone',
          password: 'other',
        }),
      });

    // Act
    const logins = await readLoginSecrets(
      { inventory_writer: ARN('sync'), inventory_reader: ARN('api') },
      { region: 'eu-west-1', client },
    );

    // Assess
    expect(logins).toEqual([
      {
        groupRole: 'inventory_writer',
        username: 'inventory_sync',
        password: 's3cret',
      },
      {
        groupRole: 'inventory_reader',
        username: 'inventory_api_clone',
        password: 'other',
      },
    ]);
  });

  it('names the secret, never its value, when it is unusable', async () => {
    secrets
      .on(GetSecretValueCommand, { SecretId: ARN('broken') })
      .resolves({ SecretString: '{"password":"leaky-value"' })
      .on(GetSecretValueCommand, { SecretId: ARN('partial') })
      .resolves({ SecretString: '{"password":"leaky-value"}' })
      .on(GetSecretValueCommand, { SecretId: ARN('denied') })
      .rejects(new Error('AccessDeniedException'));

    for (const [name, message] of [
      ['broken', /secret .*broken.* is not a JSON object/],
      ['partial', /secret .*partial.* lacks a username or password/],
      [
        'denied',
        /cannot read the inventory_writer login's secret .*denied.*AccessDenied/,
      ],
    ] as const) {
      const read = readLoginSecrets(
        { inventory_writer: ARN(name) },
        { region: 'eu-west-1', client },
      );
      await expect(read).rejects.toBeInstanceOf(LoginSecretError);
      await expect(read).rejects.toThrow(message);
      await expect(read).rejects.not.toThrow(/leaky-value/);
    }
  });
});
