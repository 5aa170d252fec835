/**
 * The deploy as CloudFormation runs it: the `MigrateOnDeploy` trigger
 * invokes the migrate function with no payload (the trigger provider sends
 * none: the handler gets `{}`), with the environment the database stack
 * gives it: the owner's connection and DATABASE_LOGIN_SECRETS naming the
 * secret of every login in APPLICATION_LOGINS (the stack's own table). The
 * server is a PostgreSQL of its own, so the production names can be used
 * as they are (roles are cluster-wide), with password authentication, and
 * the owner is what RDS makes: a login with CREATEROLE and CREATEDB that
 * owns the database, not a superuser.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  GetSecretValueCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { mockClient } from 'aws-sdk-client-mock';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type EmbeddedPostgresHandle,
  startEmbeddedPostgres,
} from '../../../infra/local/embedded-postgres.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import {
  APPLICATION_LOGINS,
  DATABASE_NAME,
} from '../../../infra/stacks/database-stack.ts';
import { GROUP_ROLES } from '../../../shared/db/roles.ts';
import { freePort } from '../../helpers/global-setup.ts';

const OWNER = 'inventory_owner';
const password = () => `pw${randomBytes(12).toString('hex')}`;
const arnOf = (role: string) =>
  `arn:aws:secretsmanager:us-east-1:000000000000:secret:${role}-login-AbCdEf`;

function urlAs(adminUrl: string, user: string, pass: string): string {
  const url = new URL(adminUrl);
  url.username = user;
  url.password = pass;
  url.pathname = `/${DATABASE_NAME}`;
  return url.toString();
}

async function withClient<T>(
  url: string,
  fn: (client: pg.Client) => Promise<T>,
): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

describe('the migrate function, as the MigrateOnDeploy trigger runs it', () => {
  let root: string;
  let server: EmbeddedPostgresHandle;
  const ownerPassword = password();
  const secrets = mockClient(SecretsManagerClient);
  const logins = Object.values(APPLICATION_LOGINS).map((login) => ({
    ...login,
    password: password(),
  }));
  const saved = { ...process.env };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'k8s-inventory-deploy-'));
    server = await startEmbeddedPostgres({
      dataDir: join(root, 'data'),
      port: await freePort(),
      ephemeral: true,
    });
    // What RDS makes of `credentials` and `databaseName`.
    await withClient(server.url, async (admin) => {
      await admin.query(
        `create role ${OWNER} login createrole createdb password '${ownerPassword}'`,
      );
      await admin.query(`create database ${DATABASE_NAME} owner ${OWNER}`);
    });
    for (const login of logins) {
      secrets
        .on(GetSecretValueCommand, { SecretId: arnOf(login.role) })
        .resolves({
          SecretString: JSON.stringify({
            username: login.username,
            password: login.password,
            engine: 'postgres',
            dbname: DATABASE_NAME,
          }),
        });
    }
    process.env.DATABASE_URL = urlAs(server.url, OWNER, ownerPassword);
    process.env.DATABASE_LOGIN_SECRETS = JSON.stringify(
      Object.fromEntries(logins.map((l) => [l.role, arnOf(l.role)])),
    );
    process.env.AWS_REGION = 'us-east-1';
  }, 180_000);
  afterAll(async () => {
    process.env = saved;
    secrets.restore();
    await server?.stop();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('creates every login the stack configures, each able to connect as a member of its group role', async () => {
    // Prepare: a cold start in this environment.
    vi.resetModules();
    const { handler } = await import('../../../functions/migrate/handler.ts');

    // Act: the trigger's invocation (no payload).
    const result = await handler({}, lambdaContext('migrate'));

    // Assess
    expect(result.applied.length).toBeGreaterThan(0);
    expect(result.logins.map((l) => l.username).sort()).toEqual(
      logins.map((l) => l.username).sort(),
    );
    for (const login of logins) {
      const row = await withClient(
        urlAs(server.url, login.username, login.password),
        async (client) =>
          (
            await client.query<{ user: string; member: boolean }>(
              'select current_user as user, pg_has_role($1, $2) as member',
              [login.role, 'member'],
            )
          ).rows[0],
      );
      expect(row, login.username).toEqual({
        user: login.username,
        member: true,
      });
    }
    // No login is a group role's own name, and every group role stays NOLOGIN.
    const groups = await withClient(
      urlAs(server.url, OWNER, ownerPassword),
      async (client) =>
        (
          await client.query<{ rolname: string; rolcanlogin: boolean }>(
            'select rolname, rolcanlogin from pg_roles where rolname = any($1) order by 1',
            [Object.values(GROUP_ROLES)],
          )
        ).rows,
    );
    expect(groups).toEqual(
      Object.values(GROUP_ROLES)
        .sort()
        .map((rolname) => ({ rolname, rolcanlogin: false })),
    );
  });

  it('runs again on the next deploy with the logins as they are', async () => {
    vi.resetModules();
    const { handler } = await import('../../../functions/migrate/handler.ts');

    const result = await handler({}, lambdaContext('migrate'));

    expect(result.applied).toEqual([]);
    expect(result.logins.every((l) => !l.created)).toBe(true);
    const webhooks = logins.find((l) => l.role === GROUP_ROLES.webhooks)!;
    await expect(
      withClient(
        urlAs(server.url, webhooks.username, webhooks.password),
        (client) => client.query('select count(*) from webhook_sources'),
      ),
    ).resolves.toBeDefined();
  });
});
