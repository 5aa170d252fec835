import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listGrants } from '../../../shared/auth/grants.ts';
import { query } from '../../../shared/db/pool.ts';
import { NotFoundError, ValidationError } from '../../../shared/errors.ts';
import { grantRole } from '../../../shared/tenancy/grants.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

describe('grantRole', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(async () => {
    await database.drop();
  });

  const email = () => `u-${randomUUID().slice(0, 8)}@example.com`;

  it('grants a role on a whole client, and the API reads it back', async () => {
    // Prepare
    const user = email();

    // Act
    const grant = await grantRole(database.db, {
      email: user,
      role: 'operator',
      clientSlug: tenant.clientSlug,
    });

    // Assess
    expect(grant).toMatchObject({
      email: user,
      role: 'operator',
      clientId: tenant.clientId,
      environmentId: null,
      created: true,
    });
    expect(await listGrants(database.db, user)).toEqual([
      { role: 'operator', clientId: tenant.clientId, environmentId: null },
    ]);
  });

  it('narrows a grant to one environment', async () => {
    const grant = await grantRole(database.db, {
      email: email(),
      role: 'viewer',
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
    });
    expect(grant.environmentId).toBe(tenant.environmentId);
  });

  it('is idempotent: the same grant again returns the existing one', async () => {
    // Prepare
    const user = email();
    const input = {
      email: user,
      role: 'viewer',
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
    };
    const first = await grantRole(database.db, input);

    // Act: the unique index compares e-mails case-insensitively.
    const again = await grantRole(database.db, {
      ...input,
      email: user.toUpperCase(),
    });
    const wholeClient = await grantRole(database.db, {
      ...input,
      envSlug: undefined,
    });

    // Assess
    expect(again).toMatchObject({ grantId: first.grantId, created: false });
    expect(wholeClient.created).toBe(true);
    expect(wholeClient.grantId).not.toBe(first.grantId);
    const rows = await query(
      database.db,
      'select id from user_grants where lower(email) = lower($1)',
      [user],
    );
    expect(rows).toHaveLength(2);
  });

  it('refuses an unknown client, environment or role, and a non-address', async () => {
    const base = {
      email: email(),
      role: 'viewer',
      clientSlug: tenant.clientSlug,
    };
    await expect(
      grantRole(database.db, { ...base, clientSlug: 'no-such-client' }),
    ).rejects.toThrow(new NotFoundError('no client with slug no-such-client'));
    await expect(
      grantRole(database.db, { ...base, envSlug: 'staging' }),
    ).rejects.toThrow(`client ${tenant.clientSlug} has no environment staging`);
    await expect(
      grantRole(database.db, { ...base, role: 'root' }),
    ).rejects.toBeInstanceOf(ValidationError);
    await expect(
      grantRole(database.db, { ...base, email: 'not an address' }),
    ).rejects.toBeInstanceOf(ValidationError);
  });
});
