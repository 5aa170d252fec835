import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../../shared/config.ts';
import { resolveDatabaseUrl } from '../../../shared/db/connect.ts';
import {
  readSecretString,
  SecretReadError,
} from '../../../shared/secret-value.ts';
import {
  type AwsStandIn,
  startAwsStandIn,
} from '../../helpers/aws-stand-ins.ts';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:login-AbCdEf';
const TOKEN = 'session-token-of-the-role';
const LOGIN = JSON.stringify({ username: 'inventory_api', password: 'p@ss/w' });

describe('readSecretString through the Parameters and Secrets extension', () => {
  let standIn: AwsStandIn;
  beforeAll(async () => {
    standIn = await startAwsStandIn(new Map([[ARN, LOGIN]]), TOKEN);
  });
  afterAll(() => standIn.stop());

  const config = (token = TOKEN) =>
    parseConfig({
      PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(standIn.port),
      AWS_SESSION_TOKEN: token,
    });

  it('GETs the secret from the extension with the session token, not the SDK', async () => {
    const before = standIn.requests.length;
    await expect(readSecretString(config(), ARN)).resolves.toBe(LOGIN);
    expect(standIn.requests.slice(before)).toEqual([
      {
        target: 'extension:secretsmanager/get',
        path: `/secretsmanager/get?secretId=${encodeURIComponent(ARN)}`,
        secretId: ARN,
        signed: false,
      },
    ]);
  });

  it('fails naming the secret when the extension refuses', async () => {
    const wrongToken = readSecretString(config('another-token'), ARN);
    await expect(wrongToken).rejects.toBeInstanceOf(SecretReadError);
    await expect(wrongToken).rejects.toThrow(/answered 401 for arn:.*login/);
    await expect(readSecretString(config(), `${ARN}x`)).rejects.toThrow(
      /answered 400 .*ResourceNotFoundException/,
    );
  });

  it('fails naming the port when no extension listens', async () => {
    const closed = await startAwsStandIn(new Map(), TOKEN);
    await closed.stop();
    const read = readSecretString(
      parseConfig({
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(closed.port),
        AWS_SESSION_TOKEN: TOKEN,
      }),
      ARN,
    );
    await expect(read).rejects.toThrow(
      new RegExp(`extension on port ${closed.port} did not answer`),
    );
  });

  it('makes the database URL from the login the extension gives', async () => {
    const url = await resolveDatabaseUrl(
      parseConfig({
        PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: String(standIn.port),
        AWS_SESSION_TOKEN: TOKEN,
        DATABASE_SECRET_ARN: ARN,
        DATABASE_HOST: 'proxy.example',
        DATABASE_NAME: 'inventory',
      }),
    );
    expect(url).toBe(
      'postgres://inventory_api:p%40ss%2Fw@proxy.example:5432/inventory?sslmode=verify-full',
    );
  });
});

describe('readSecretString without the extension', () => {
  it('reads with the SDK (GetSecretValue, signed)', async () => {
    const standIn = await startAwsStandIn(new Map([[ARN, LOGIN]]), TOKEN);
    const saved = process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
    const keys = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
    const savedKeys = keys.map((k) => process.env[k]);
    try {
      process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = standIn.endpoint;
      process.env.AWS_ACCESS_KEY_ID = 'ASIAEXAMPLEEXAMPLE00';
      process.env.AWS_SECRET_ACCESS_KEY = 'example';
      await expect(readSecretString(parseConfig({}), ARN)).resolves.toBe(LOGIN);
      expect(standIn.requests).toEqual([
        expect.objectContaining({
          target: 'secretsmanager.GetSecretValue',
          secretId: ARN,
          signed: true,
        }),
      ]);
    } finally {
      if (saved === undefined)
        delete process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER;
      else process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = saved;
      keys.forEach((k, i) => {
        if (savedKeys[i] === undefined) delete process.env[k];
        else process.env[k] = savedKeys[i];
      });
      await standIn.stop();
    }
  });
});
