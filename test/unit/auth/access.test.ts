import { describe, expect, it } from 'vitest';
import {
  AccessContext,
  narrowScopeToClient,
} from '../../../shared/auth/access.ts';
import { scopeCondition } from '../../../shared/auth/scope-sql.ts';
import { SqlParams } from '../../../shared/db/params.ts';

const ACME = '11111111-1111-4111-8111-111111111111';
const GLOBEX = '22222222-2222-4222-8222-222222222222';
const PROD = 'aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa';
const STAGING = 'bbbbbbbb-bbbb-4bbb-8bbb-bbbbbbbbbbbb';

const principal = { sub: 's', email: 'e@example.test' };

describe('AccessContext', () => {
  it('never lets an environment grant open its client or a sibling environment', () => {
    // Prepare
    const access = new AccessContext(principal, [
      { role: 'viewer', clientId: ACME, environmentId: STAGING },
    ]);

    // Act
    const scope = access.scopeFor('assets:read');

    // Assess
    expect(scope).toEqual({
      clientIds: [],
      environments: [{ clientId: ACME, environmentId: STAGING }],
    });
    expect(access.hasAccessToEnvironment(ACME, STAGING)).toBe(true);
    expect(access.hasAccessToEnvironment(ACME, PROD)).toBe(false);
    expect(access.can('assets:read', ACME, PROD)).toBe(false);
    expect(access.canInClient('assets:read', ACME)).toBe(true);
    expect(access.canInClient('assets:read', GLOBEX)).toBe(false);
  });

  it('opens every environment of a client with a client-wide grant', () => {
    // Prepare
    const access = new AccessContext(principal, [
      { role: 'operator', clientId: ACME, environmentId: null },
      { role: 'viewer', clientId: ACME, environmentId: PROD },
    ]);

    // Act
    const scope = access.scopeFor('metrics:read');

    // Assess: the environment grant adds nothing to a client already open.
    expect(scope).toEqual({ clientIds: [ACME], environments: [] });
    expect(access.can('metrics:read', ACME, STAGING)).toBe(true);
    expect(access.scopeFor('assets:read')).toEqual({
      clientIds: [ACME],
      environments: [],
    });
  });

  it('tells environment access apart from holding the permission there', () => {
    // Prepare: a viewer may see the cluster but not its metrics.
    const access = new AccessContext(principal, [
      { role: 'viewer', clientId: ACME, environmentId: PROD },
      { role: 'operator', clientId: GLOBEX, environmentId: null },
    ]);

    // Act + Assess
    expect(access.hasAccessToEnvironment(ACME, PROD)).toBe(true);
    expect(access.can('metrics:read', ACME, PROD)).toBe(false);
    expect(access.hasAnyPermissionInAnyScope(['metrics:read'])).toBe(true);
    expect(() =>
      access.requireAnyPermissionInAnyScope(['assets:write']),
    ).toThrow('missing permission');
    expect(access.scopeFor('logs:read')).toEqual({
      clientIds: [GLOBEX],
      environments: [],
    });
  });

  it('narrows a scope to one client', () => {
    // Prepare
    const access = new AccessContext(principal, [
      { role: 'viewer', clientId: ACME, environmentId: PROD },
      { role: 'viewer', clientId: GLOBEX, environmentId: null },
    ]);

    // Act
    const scope = narrowScopeToClient(access.scopeFor('assets:read'), ACME);

    // Assess
    expect(scope).toEqual({
      clientIds: [],
      environments: [{ clientId: ACME, environmentId: PROD }],
    });
  });
});

describe('scopeCondition', () => {
  it('renders every id as a parameter', () => {
    // Prepare
    const params = new SqlParams();
    params.add('first');

    // Act
    const sql = scopeCondition(
      {
        clientIds: [ACME],
        environments: [{ clientId: GLOBEX, environmentId: PROD }],
      },
      params,
      { client: 'c.client_id', environment: 'c.environment_id' },
    );

    // Assess
    expect(sql).toBe(
      '(c.client_id = any($2::uuid[]) or (c.client_id, c.environment_id) in (select * from unnest($3::uuid[], $4::uuid[])))',
    );
    expect(params.values).toEqual(['first', [ACME], [GLOBEX], [PROD]]);
  });

  it('matches nothing for an empty scope', () => {
    // Act
    const sql = scopeCondition(
      { clientIds: [], environments: [] },
      new SqlParams(),
    );

    // Assess
    expect(sql).toBe('false');
  });

  it('refuses a column reference that is not an identifier', () => {
    // Act + Assess
    expect(() =>
      scopeCondition({ clientIds: [ACME], environments: [] }, new SqlParams(), {
        client: 'client_id; drop table clusters',
        environment: 'environment_id',
      }),
    ).toThrow('not a column reference');
  });
});
