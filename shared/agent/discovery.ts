/**
 * Which optional kinds (a CRD or an aggregated API: Argo Rollouts, Argo CD
 * Applications, metrics-server usage, any later one) a cluster serves, read
 * from API discovery once per cycle, per resource: `GET /apis/{group}/{version}`
 * (an APIResourceList) once for every group/version an optional kind lives
 * in. A group being served says nothing of its resources: a cluster running
 * Argo Rollouts without Argo CD serves `argoproj.io/v1alpha1` with
 * `rollouts` and no `applications`.
 *
 * Every way a real apiserver says "not here" is one of three reasons, and
 * never fails the collection of anything else:
 * - `not_installed`: the resource is missing from its group's discovery;
 *   the group/version is not served (404 on discovery); a list answers 404,
 *   with a Status (kube-apiserver since its NotFound handler, 1.24) or as
 *   the plain text `404 page not found` of older releases (a CRD deleted
 *   between discovery and the list).
 * - `unavailable`: 503. The aggregator answers it (plain text `service
 *   unavailable`, or the proxy's dial error) for a registered APIService
 *   whose backend is down: metrics-server not running. Or no answer in
 *   time: a 504 (the apiserver's own timeout, `reason: Timeout`) or the
 *   agent's timeout coming first, for a backend that is up but hangs
 *   (metrics-server stuck scraping its kubelets). Left out, an optional
 *   kind prunes nothing, so waiting on it must not cost the inventory.
 * - `forbidden`: 403 or 401: the agent's ClusterRole does not grant it.
 * Anything else (a 500, the apiserver unreachable) is no answer at all and
 * fails the cycle, as it does for a core kind, and so does any timeout of a
 * core kind (its partial list would prune rows that exist).
 */
import type { V1APIResource, V1APIResourceList } from '@kubernetes/client-node';
import { type KubeApi, KubeApiError, KubeApiTimeoutError } from './kube-api.ts';
import { type ApiResource, groupPath } from './resources.ts';

export type NotCollectedReason = 'not_installed' | 'unavailable' | 'forbidden';

/** Why an optional kind was not collected; `detail` says what answered. */
export interface Absence {
  reason: NotCollectedReason;
  detail: string;
}

/** `group/version`, or `v1` for the core group. */
export const groupVersionOf = (r: ApiResource): string =>
  r.group === '' ? r.version : `${r.group}/${r.version}`;

/** `rollouts.argoproj.io/v1alpha1`, `services.v1`: names a kind in logs and metrics. */
export const resourceName = (r: ApiResource): string =>
  `${r.resource}.${groupVersionOf(r)}`;

/**
 * The reason an optional kind's discovery or list failed, when the failure
 * is the apiserver saying the kind is not here; undefined when it is not
 * (the cycle must fail).
 */
export function absenceOf(error: unknown): Absence | undefined {
  if (error instanceof KubeApiTimeoutError) {
    return { reason: 'unavailable', detail: error.message };
  }
  if (!(error instanceof KubeApiError)) return undefined;
  const detail = `HTTP ${error.status}${error.reason ? ` ${error.reason}` : ''}: ${error.message}`;
  if (error.status === 404) return { reason: 'not_installed', detail };
  if (error.status === 503 || error.status === 504) {
    return { reason: 'unavailable', detail };
  }
  if (error.status === 403 || error.status === 401)
    return { reason: 'forbidden', detail };
  return undefined;
}

/** The resource as its group's discovery lists it (subresources excluded). */
export function findResource(
  list: V1APIResourceList,
  resource: string,
): V1APIResource | undefined {
  return (Array.isArray(list?.resources) ? list.resources : []).find(
    (r) => r?.name === resource,
  );
}

/**
 * What one discovery document says of one resource: undefined when it is
 * served and listable, else why not.
 */
export function absenceIn(
  list: V1APIResourceList,
  r: ApiResource,
): Absence | undefined {
  const found = findResource(list, r.resource);
  if (found === undefined) {
    return {
      reason: 'not_installed',
      detail: `${groupVersionOf(r)} does not list ${r.resource}`,
    };
  }
  if (Array.isArray(found.verbs) && !found.verbs.includes('list')) {
    return {
      reason: 'not_installed',
      detail: `${groupVersionOf(r)} serves ${r.resource} without list`,
    };
  }
  return undefined;
}

/**
 * Reads the discovery of every group/version the given resources live in,
 * once each, and says of each resource whether it is served: a map from
 * resource to its absence (a resource missing from the map is served).
 * Throws what is not an absence (a 500, the apiserver unreachable).
 */
export async function discoverAbsent(
  api: KubeApi,
  resources: readonly ApiResource[],
): Promise<Map<ApiResource, Absence>> {
  const byGroupVersion = new Map<string, ApiResource[]>();
  for (const r of resources) {
    const path = groupPath(r);
    byGroupVersion.set(path, [...(byGroupVersion.get(path) ?? []), r]);
  }
  const absent = new Map<ApiResource, Absence>();
  await Promise.all(
    [...byGroupVersion].map(async ([path, inGroup]) => {
      let list: V1APIResourceList;
      try {
        list = await api.getJson(path);
      } catch (error) {
        const absence = absenceOf(error);
        if (absence === undefined) throw error;
        const detail = `discovery ${path} answered ${absence.detail}`;
        for (const r of inGroup) absent.set(r, { ...absence, detail });
        return;
      }
      for (const r of inGroup) {
        const absence = absenceIn(list, r);
        if (absence !== undefined) absent.set(r, absence);
      }
    }),
  );
  return absent;
}
