/**
 * The tenant check of every `/clusters/{clusterID}/...` read, in the spec's
 * order: an unknown cluster, or one outside the caller's environments, is a
 * 404 (a malformed id too: it cannot exist); a cluster the caller sees but
 * without `permission` on its environment is a 403. Only then may the
 * handler validate its query parameters.
 */
import type { Permission } from '../auth/permissions.ts';
import type { ClusterRecord } from '../clusters/repo.ts';
import { ForbiddenError, NotFoundError } from '../errors.ts';
import { type ApiRequest, apiHandler } from './api-handler.ts';
import { ok } from './response.ts';

export function checkClusterRead(
  request: Pick<ApiRequest, 'access' | 'cluster'>,
  permission: Permission,
): ClusterRecord {
  // Read with the caller's grants (apiHandler's clusterParam).
  const cluster = request.cluster ?? undefined;
  if (
    !cluster ||
    !request.access.hasAccessToEnvironment(
      cluster.client_id,
      cluster.environment_id,
    )
  ) {
    throw new NotFoundError('cluster not found');
  }
  if (
    !request.access.can(permission, cluster.client_id, cluster.environment_id)
  ) {
    throw new ForbiddenError(
      `missing ${permission} on the cluster's environment`,
    );
  }
  return cluster;
}

/** What a cluster read returns: the response's `data` and `meta`. */
export type ClusterRead = (
  request: ApiRequest,
  cluster: ClusterRecord,
) => Promise<{ data: unknown; meta?: object }>;

/**
 * The handler of a `/clusters/{clusterID}/...` route: the route gate, then
 * checkClusterRead (404, 403), then `read`, which alone may look at the
 * query string.
 */
export function clusterReadHandler(
  routeName: string,
  read: ClusterRead,
  permission: Permission = 'assets:read',
) {
  return apiHandler(
    routeName,
    async (request) => {
      const cluster = checkClusterRead(request, permission);
      const { data, meta } = await read(request, cluster);
      return ok(data, meta);
    },
    { clusterParam: 'clusterID' },
  );
}
