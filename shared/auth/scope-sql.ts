/**
 * Applies a Scope (shared/auth/access.ts) to a query:
 * `(client_id = any($a) or (client_id, environment_id) in (...))`, with every
 * id a parameter.
 */
import { column, type SqlParams } from '../db/params.ts';
import type { Scope } from './access.ts';

export interface ScopeColumns {
  client: string;
  environment: string;
}

/**
 * A boolean SQL condition true exactly for rows inside `scope`; `false` for
 * an empty scope, so an unscoped caller reads nothing rather than everything.
 */
export function scopeCondition(
  scope: Scope,
  params: SqlParams,
  columns: ScopeColumns = {
    client: 'client_id',
    environment: 'environment_id',
  },
): string {
  const client = column(columns.client);
  const environment = column(columns.environment);
  const parts: string[] = [];
  if (scope.clientIds.length > 0) {
    parts.push(`${client} = any(${params.add(scope.clientIds)}::uuid[])`);
  }
  if (scope.environments.length > 0) {
    const clients = params.add(scope.environments.map((e) => e.clientId));
    const environments = params.add(
      scope.environments.map((e) => e.environmentId),
    );
    parts.push(
      `(${client}, ${environment}) in (select * from unnest(${clients}::uuid[], ${environments}::uuid[]))`,
    );
  }
  return parts.length === 0 ? 'false' : `(${parts.join(' or ')})`;
}

/**
 * `exists (the stored cluster, inside scope)`: the second wall a read of a
 * cluster's rows carries besides the route's access check, so a read
 * handed the wrong cluster, or a caller's narrower scope, reads nothing.
 */
export function clusterInScope(
  params: SqlParams,
  clusterId: string,
  scope: Scope,
): string {
  const condition = scopeCondition(scope, params, {
    client: 'c.client_id',
    environment: 'c.environment_id',
  });
  return `exists (select 1 from clusters c where c.id = ${params.add(clusterId)} and ${condition})`;
}
