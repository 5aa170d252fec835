/**
 * The cluster lists' one domain function: a scoped page of clusters, with
 * each item's capacity and health counts when asked (read by the same
 * statement, for exactly the page's clusters, after the tenant scope was
 * applied).
 */
import {
  type AccessContext,
  narrowScopeToClient,
  type Scope,
} from '../auth/access.ts';
import type { Permission } from '../auth/permissions.ts';
import type { Db } from '../db/pool.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { isUuid } from '../patterns.ts';
import type { ClusterListQuery } from './params.ts';
import { type ClusterListFilter, listClusters } from './repo.ts';

export async function listClusterPage(
  db: Db,
  scope: Scope,
  query: ClusterListQuery,
  within: ClusterListFilter = {},
): ReturnType<typeof listClusters> {
  return listClusters(db, scope, [within, query.filter], query.paging, {
    healthCounts: query.includeCapacity,
  });
}

/**
 * The scope of `permission` inside the path's client. The caller must hold
 * it somewhere in that client (client-wide or on one of its environments),
 * else 403; an id that is not a UUID names nothing (404).
 */
export function clientReadScope(
  access: AccessContext,
  clientId: string | undefined,
  permission: Permission,
): { clientId: string; scope: Scope } {
  if (!isUuid(clientId)) throw new NotFoundError('client not found');
  if (!access.canInClient(permission, clientId)) {
    throw new ForbiddenError(`missing ${permission} on the client`);
  }
  return {
    clientId,
    scope: narrowScopeToClient(access.scopeFor(permission), clientId),
  };
}
