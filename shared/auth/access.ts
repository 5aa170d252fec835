/**
 * What a caller may read: the spec's RBAC semantics over the caller's grants.
 *
 * A client-wide grant opens every environment of its client. An environment
 * grant opens that one environment and never its client: it never counts as
 * a client-wide grant, so it cannot open a sibling environment or a
 * client-level listing beyond its own environment.
 */
import { ForbiddenError } from '../errors.ts';
import type { Grant } from './grants.ts';
import type { Permission } from './permissions.ts';
import { roleHas } from './roles.ts';

/** The verified identity of the caller (from the JWT's claims). */
export interface Principal {
  sub: string;
  email: string | undefined;
}

export interface EnvironmentRef {
  clientId: string;
  environmentId: string;
}

/**
 * Where a permission holds: whole clients, plus single environments of
 * clients not already covered whole. Empty means nowhere.
 */
export interface Scope {
  clientIds: readonly string[];
  environments: readonly EnvironmentRef[];
}

export const EMPTY_SCOPE: Scope = { clientIds: [], environments: [] };

export class AccessContext {
  readonly principal: Principal;
  readonly grants: readonly Grant[];

  constructor(principal: Principal, grants: readonly Grant[]) {
    this.principal = principal;
    this.grants = grants;
  }

  /** True when any one of `permissions` is held in some scope. */
  hasAnyPermissionInAnyScope(permissions: readonly Permission[]): boolean {
    return this.grants.some((grant) =>
      permissions.some((permission) => roleHas(grant.role, permission)),
    );
  }

  /**
   * The route gate: proves only that the caller holds one of `permissions`
   * somewhere. Handlers then check the tenant of what they read.
   */
  requireAnyPermissionInAnyScope(permissions: readonly Permission[]): void {
    if (!this.hasAnyPermissionInAnyScope(permissions)) {
      throw new ForbiddenError('missing permission');
    }
  }

  /** The clients and environments where `permission` holds. */
  scopeFor(permission: Permission): Scope {
    const clientIds = new Set<string>();
    const environments = new Map<string, EnvironmentRef>();
    for (const grant of this.grants) {
      if (!roleHas(grant.role, permission)) continue;
      if (grant.environmentId === null) clientIds.add(grant.clientId);
      else {
        environments.set(`${grant.clientId}/${grant.environmentId}`, {
          clientId: grant.clientId,
          environmentId: grant.environmentId,
        });
      }
    }
    return {
      clientIds: [...clientIds],
      // An environment of a client already open whole adds nothing.
      environments: [...environments.values()].filter(
        (env) => !clientIds.has(env.clientId),
      ),
    };
  }

  /** True when any grant, of any role, covers the environment. */
  hasAccessToEnvironment(clientId: string, environmentId: string): boolean {
    return this.grants.some((grant) => covers(grant, clientId, environmentId));
  }

  /** True when `permission` holds on the client's environment. */
  can(
    permission: Permission,
    clientId: string,
    environmentId: string,
  ): boolean {
    return this.grants.some(
      (grant) =>
        roleHas(grant.role, permission) &&
        covers(grant, clientId, environmentId),
    );
  }

  /**
   * True when `permission` holds anywhere in the client: client-wide, or on
   * at least one of its environments.
   */
  canInClient(permission: Permission, clientId: string): boolean {
    return this.grants.some(
      (grant) => grant.clientId === clientId && roleHas(grant.role, permission),
    );
  }
}

function covers(
  grant: Grant,
  clientId: string,
  environmentId: string,
): boolean {
  return (
    grant.clientId === clientId &&
    (grant.environmentId === null || grant.environmentId === environmentId)
  );
}

/** The part of `scope` inside one client. */
export function narrowScopeToClient(scope: Scope, clientId: string): Scope {
  return {
    clientIds: scope.clientIds.filter((id) => id === clientId),
    environments: scope.environments.filter((env) => env.clientId === clientId),
  };
}

export function isEmptyScope(scope: Scope): boolean {
  return scope.clientIds.length === 0 && scope.environments.length === 0;
}
