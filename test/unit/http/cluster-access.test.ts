import { describe, expect, it } from 'vitest';
import { AccessContext } from '../../../shared/auth/access.ts';
import type { Grant } from '../../../shared/auth/grants.ts';
import type { ClusterRecord } from '../../../shared/clusters/repo.ts';
import { ForbiddenError, NotFoundError } from '../../../shared/errors.ts';
import { checkClusterRead } from '../../../shared/http/cluster-access.ts';
import {
  permissionsOf,
  type SourcesAccess,
} from '../../../shared/http/routes.ts';

const CLIENT = '11111111-1111-4111-8111-111111111111';
const ENV = '22222222-2222-4222-8222-222222222222';
const SIBLING = '33333333-3333-4333-8333-333333333333';

const cluster = {
  id: '44444444-4444-4444-8444-444444444444',
  client_id: CLIENT,
  environment_id: ENV,
} as ClusterRecord;

function caller(...grants: Grant[]): AccessContext {
  return new AccessContext({ sub: 'u', email: 'u@example.com' }, grants);
}

/** The what-changed route's shape: several sources, each its permission. */
const whatChanged: SourcesAccess = {
  shape: 'cluster',
  sources: {
    changes: 'changes:read',
    deploys: 'changes:read',
    alerts: 'alerts:read',
    events: 'assets:read',
  },
};

describe('checkClusterRead', () => {
  it('opens only the sources whose permission holds on the cluster environment', () => {
    // Act
    const viewer = checkClusterRead(
      caller({ role: 'viewer', clientId: CLIENT, environmentId: ENV }),
      cluster,
      whatChanged,
    );
    const operator = checkClusterRead(
      caller({ role: 'operator', clientId: CLIENT, environmentId: null }),
      cluster,
      whatChanged,
    );

    // Assess
    expect(viewer.sources).toEqual(['events']);
    expect(operator.sources).toEqual([
      'changes',
      'deploys',
      'alerts',
      'events',
    ]);
  });

  it('gates a sources route on any of its permissions, deduplicated', () => {
    // Act & Assess
    expect(permissionsOf(whatChanged)).toEqual([
      'changes:read',
      'alerts:read',
      'assets:read',
    ]);
  });

  it('answers 404 for a cluster outside the caller environments and 403 without the permission', () => {
    // Prepare
    const sibling = caller({
      role: 'super_admin',
      clientId: CLIENT,
      environmentId: SIBLING,
    });
    const viewer = caller({
      role: 'viewer',
      clientId: CLIENT,
      environmentId: ENV,
    });

    // Act & Assess
    expect(() =>
      checkClusterRead(sibling, cluster, {
        shape: 'cluster',
        permission: 'assets:read',
      }),
    ).toThrow(NotFoundError);
    expect(() => checkClusterRead(viewer, undefined, whatChanged)).toThrow(
      NotFoundError,
    );
    expect(() =>
      checkClusterRead(viewer, cluster, {
        shape: 'cluster',
        permission: 'metrics:read',
      }),
    ).toThrow(ForbiddenError);
    expect(() =>
      checkClusterRead(viewer, cluster, {
        shape: 'cluster',
        sources: { changes: 'changes:read', alerts: 'alerts:read' },
      }),
    ).toThrow('missing all of changes:read, alerts:read');
  });
});
