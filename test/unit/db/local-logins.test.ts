import { describe, expect, it } from 'vitest';
import { localLogins, urlAs } from '../../../shared/db/local-logins.ts';
import type { Db } from '../../../shared/db/pool.ts';
import {
  APPLICATION_LOGINS,
  ensureRolesAndGrants,
  GROUP_ROLES,
  RolesError,
} from '../../../shared/db/roles.ts';

const OWNER = 'postgres://postgres:secret@127.0.0.1:5433/inventory';

describe('local logins', () => {
  it('gives every group role its production login, the prefix prepended', () => {
    // Act
    const logins = localLogins(OWNER, 'kinv1_');

    // Assess
    for (const [kind, { username, role }] of Object.entries(
      APPLICATION_LOGINS,
    )) {
      expect(logins[kind as keyof typeof logins]).toMatchObject({
        username: `kinv1_${username}`,
        groupRole: role,
      });
    }
  });

  it('derives the same passwords from the same server and owner, whatever the database', () => {
    // Act
    const a = localLogins(OWNER);
    const b = localLogins(OWNER.replace('/inventory', '/other'));
    const otherOwner = localLogins(OWNER.replace('secret', 'other'));

    // Assess
    expect(b).toEqual(a);
    expect(otherOwner.writer.password).not.toBe(a.writer.password);
    const passwords = new Set(Object.values(a).map((l) => l.password));
    expect(passwords.size).toBe(Object.keys(GROUP_ROLES).length);
    for (const login of Object.values(a)) {
      expect(login.password).not.toContain('secret');
    }
  });

  it('puts a login in the owner URL, keeping the server and database', () => {
    const login = localLogins(OWNER).reader;

    const url = new URL(urlAs(OWNER, login));

    expect(url.username).toBe('inventory_api');
    expect(decodeURIComponent(url.password)).toBe(login.password);
    expect(url.host).toBe('127.0.0.1:5433');
    expect(url.pathname).toBe('/inventory');
  });
});

describe('login names', () => {
  it('refuses a login named like its prefixed group role, before touching the database', async () => {
    // Prepare: nothing may be asked of this database.
    const untouched = {} as Db;

    // Act
    const attempt = ensureRolesAndGrants(
      untouched,
      [
        {
          groupRole: GROUP_ROLES.webhooks,
          username: `t1_${GROUP_ROLES.webhooks}`,
          password: 'pw',
        },
      ],
      { rolePrefix: 't1_' },
    );

    // Assess
    await expect(attempt).rejects.toBeInstanceOf(RolesError);
    await expect(attempt).rejects.toThrow(
      'the inventory_webhooks login cannot be named t1_inventory_webhooks',
    );
  });
});
