import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { queryOne } from '../../../shared/db/pool.ts';
import { ValidationError } from '../../../shared/errors.ts';
import {
  parseAdminCommand,
  runAdminCommand,
} from '../../../shared/tenancy/admin.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { captureStdout } from '../sweeps/support.ts';

describe('admin commands', () => {
  let database: TestDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  const slug = () => `a-${randomUUID().slice(0, 8)}`;

  it('creates a tenant, then grants on it, returning the ids', async () => {
    // Prepare
    const client = slug();

    // Act
    const tenant = await runAdminCommand(database.db, {
      command: 'tenant',
      client,
      environment: 'production',
    });
    const again = await runAdminCommand(database.db, {
      command: 'tenant',
      client,
      environment: 'production',
    });
    const grant = await runAdminCommand(database.db, {
      command: 'grant',
      email: 'alice@example.com',
      role: 'viewer',
      client,
      environment: 'production',
    });

    // Assess
    expect(tenant).toMatchObject({
      command: 'tenant',
      clientSlug: client,
      envSlug: 'production',
      clientCreated: true,
      environmentCreated: true,
    });
    expect(again).toMatchObject({
      clientCreated: false,
      environmentCreated: false,
    });
    if (tenant.command !== 'tenant' || grant.command !== 'grant') {
      throw new Error('unexpected result kinds');
    }
    expect(again).toMatchObject({
      clientId: tenant.clientId,
      environmentId: tenant.environmentId,
    });
    expect(grant).toMatchObject({
      clientId: tenant.clientId,
      environmentId: tenant.environmentId,
      role: 'viewer',
      created: true,
    });
    const row = await queryOne<{ email: string }>(
      database.db,
      'select email from user_grants where id = $1',
      [grant.grantId],
    );
    expect(row.email).toBe('alice@example.com');
  });

  it.each([
    [{}, /the event must be a JSON object|"tenant" or "grant"/],
    ['tenant', /the event must be a JSON object/],
    [{ command: 'drop' }, /command: must be "tenant" or "grant"/],
    [{ command: 'tenant', client: 'acme' }, /environment: required/],
    [
      { command: 'grant', email: 'a@example.com', role: 'root', client: 'c' },
      /role: must be one of viewer, operator, admin, super_admin/,
    ],
    [
      {
        command: 'grant',
        email: 'a@example.com',
        role: 'viewer',
        client: 'c',
        enviroment: 'production',
      },
      /Unrecognized key: "enviroment"/,
    ],
  ])('refuses %j with a clear message', (event, message) => {
    expect(() => parseAdminCommand(event)).toThrow(ValidationError);
    expect(() => parseAdminCommand(event)).toThrow(message);
  });

  it('adds, lists and disables a webhook source, the secret only in the add', async () => {
    // Prepare
    const client = slug();
    await runAdminCommand(database.db, {
      command: 'tenant',
      client,
      environment: 'production',
    });

    // Act
    const added = await runAdminCommand(database.db, {
      command: 'webhook-add',
      client,
      environment: 'production',
      kind: 'alertmanager',
    });
    if (added.command !== 'webhook-add') throw new Error('not added');
    const disabled = await runAdminCommand(database.db, {
      command: 'webhook-disable',
      id: added.id,
    });
    const listed = await runAdminCommand(database.db, {
      command: 'webhook-list',
      client,
    });

    // Assess
    expect(added.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(disabled).toMatchObject({
      command: 'webhook-disable',
      id: added.id,
    });
    expect(listed).toEqual({
      command: 'webhook-list',
      sources: [
        expect.objectContaining({
          id: added.id,
          kind: 'alertmanager',
          client,
          environment: 'production',
          disabledAt: expect.any(Date),
        }),
      ],
    });
    expect(JSON.stringify(listed)).not.toContain(added.secret);
    expect(() =>
      parseAdminCommand({ command: 'webhook-add', client, kind: 'github' }),
    ).toThrow(/kind: must be one of argocd, alertmanager/);
  });

  it('runs through the Lambda entry, connected from the configuration', async () => {
    // Prepare: the entry reads its configuration when first imported; it
    // connects as the admin function's login in AWS, never the owner.
    const previousUrl = process.env.DATABASE_URL;
    process.env.DATABASE_URL = database.as('admin').url;
    const { handler } = await import('../../../functions/admin/handler.ts');
    const client = slug();
    const out = captureStdout();

    // Act
    let result: Awaited<ReturnType<typeof handler>>;
    let refused: unknown;
    let others: Awaited<ReturnType<typeof handler>>[];
    try {
      result = await handler(
        { command: 'tenant', client, environment: 'staging' },
        lambdaContext('admin'),
      );
      // Every other command, each statement it issues under that login.
      const run = (event: Record<string, unknown>) =>
        handler(event, lambdaContext('admin'));
      const granted = await run({
        command: 'grant',
        email: 'a@example.com',
        role: 'viewer',
        client,
        environment: 'staging',
      });
      const added = await run({
        command: 'webhook-add',
        client,
        environment: 'staging',
        kind: 'argocd',
      });
      const listed = await run({ command: 'webhook-list', client });
      const disabled = await run({
        command: 'webhook-disable',
        id: (added as { id: string }).id,
      });
      others = [granted, added, listed, disabled];
      refused = await handler(
        {
          command: 'grant',
          email: 'b@example.com',
          role: 'viewer',
          client: 'nope',
        },
        lambdaContext('admin'),
      ).catch((error: unknown) => error);
    } finally {
      out.restore();
      if (previousUrl === undefined) delete process.env.DATABASE_URL;
      else process.env.DATABASE_URL = previousUrl;
    }

    // Assess
    expect(result).toMatchObject({
      command: 'tenant',
      clientSlug: client,
      clientCreated: true,
    });
    expect(others.map((o) => o.command)).toEqual([
      'grant',
      'webhook-add',
      'webhook-list',
      'webhook-disable',
    ]);
    expect(others[0]).toMatchObject({ created: true });
    expect(others[3]).toMatchObject({ disabledAt: expect.any(Date) });
    expect(String(refused)).toMatch(/no client with slug nope/);
    const logged = out.json();
    expect(
      logged.find((l) => l.message === 'admin command done'),
    ).toMatchObject({ command: 'tenant', clientSlug: client });
    expect(logged.find((l) => l.message === 'invocation failed')).toMatchObject(
      { level: 'ERROR', function_name: 'admin' },
    );
  });
});
