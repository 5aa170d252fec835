/**
 * The tenant check of every `/clusters/{clusterID}/...` read, in the spec's
 * order, with the permission(s) its route table entry names: an unknown
 * cluster, or one outside the caller's environments, is a 404 (a malformed
 * id too: it cannot exist); a cluster the caller sees but without the
 * permission on its environment is a 403 (with several sources: without
 * any of theirs). Only then does apiHandler read the query parameters.
 */
import type { AccessContext } from '../auth/access.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import type { PermissionAccess, SourcesAccess } from './routes.ts';

export interface ClusterReadAccess {
  cluster: ClusterRecord;
  /** The route's sources whose permission holds on the cluster's environment. */
  sources: string[];
}

export function checkClusterRead(
  access: AccessContext,
  /** Read with the caller's grants; undefined when no such cluster. */
  cluster: ClusterRecord | undefined,
  routeAccess: PermissionAccess | SourcesAccess,
): ClusterReadAccess {
  if (
    !cluster ||
    !access.hasAccessToEnvironment(cluster.client_id, cluster.environment_id)
  ) {
    throw new NotFoundError('cluster not found');
  }
  const holds = (permission: Parameters<AccessContext['can']>[0]) =>
    access.can(permission, cluster.client_id, cluster.environment_id);
  if (!('sources' in routeAccess)) {
    if (!holds(routeAccess.permission)) {
      throw new ForbiddenError(
        `missing ${routeAccess.permission} on the cluster's environment`,
      );
    }
    return { cluster, sources: [] };
  }
  const sources = Object.entries(routeAccess.sources)
    .filter(([, permission]) => holds(permission))
    .map(([source]) => source);
  if (sources.length === 0) {
    const needed = [...new Set(Object.values(routeAccess.sources))];
    throw new ForbiddenError(
      `missing all of ${needed.join(', ')} on the cluster's environment`,
    );
  }
  return { cluster, sources };
}
