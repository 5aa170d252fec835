/**
 * Lists what the collector reads (shared/agent/resources.ts, `COLLECTED`)
 * from a cluster, paged (`limit` and `continue`), into the collector's
 * input. The agent and the seeder both read a cluster through this, so
 * they can never disagree about what a cluster holds.
 *
 * A kind the agent may not read (403) or whose API the cluster does not
 * serve (a 404 without a Status: Argo Rollouts, Argo CD or metrics-server
 * not installed) is left undefined, "not collected": its array is left out
 * of the message and the backend does not prune it. Any other failure
 * (the apiserver unreachable, a 5xx) fails the whole collection, since a
 * partial list would prune rows that still exist.
 */
import {
  buildInventory,
  type ClusterObjects,
  type CollectOptions,
} from '../collector/collect.ts';
import type { K8sObject } from '../collector/k8s.ts';
import type { InventoryInput } from '../wire/inventory.ts';
import { type KubeApi, KubeApiError } from './kube-api.ts';
import { type ApiResource, COLLECTED, resourcePath } from './resources.ts';

export type CollectedField = keyof typeof COLLECTED;

export interface NotCollected {
  field: CollectedField;
  resource: string;
  reason: 'forbidden' | 'not_installed';
}

export interface ListedCluster {
  objects: ClusterObjects;
  notCollected: NotCollected[];
}

export class CollectionError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'CollectionError';
  }
}

export interface ListOptions {
  pageSize?: number;
  /** Lists in flight at once; the apiserver is shared with everyone else. */
  concurrency?: number;
}

const groupVersion = (r: ApiResource) =>
  r.group === '' ? r.version : `${r.group}/${r.version}`;

/** Reads every collected kind, plus `/version`. */
export async function listCluster(
  api: KubeApi,
  options: ListOptions = {},
): Promise<ListedCluster> {
  const pageSize = options.pageSize ?? 500;
  const objects: ClusterObjects = {};
  const notCollected: NotCollected[] = [];

  try {
    objects.version = await api.getJson('/version');
  } catch (error) {
    throw new CollectionError(
      `the Kubernetes API at ${api.server} did not answer /version: ${(error as Error).message}`,
      { cause: error },
    );
  }

  const fields = Object.keys(COLLECTED) as CollectedField[];
  const next = (() => {
    let i = 0;
    return () => fields[i++];
  })();
  const worker = async () => {
    for (let field = next(); field !== undefined; field = next()) {
      const resource = COLLECTED[field];
      const path = resourcePath(resource);
      try {
        const items: K8sObject[] = await api.listAll(path, pageSize);
        objects[field] = items;
      } catch (error) {
        const name = `${resource.resource}.${groupVersion(resource)}`;
        if (error instanceof KubeApiError) {
          if (error.status === 403 || error.status === 401) {
            notCollected.push({ field, resource: name, reason: 'forbidden' });
            continue;
          }
          if (error.status === 404 && !error.statusObject) {
            notCollected.push({
              field,
              resource: name,
              reason: 'not_installed',
            });
            continue;
          }
        }
        throw new CollectionError(
          `listing ${name} failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
  };
  await Promise.all(
    Array.from({ length: options.concurrency ?? 4 }, () => worker()),
  );
  notCollected.sort(
    (a, b) => fields.indexOf(a.field) - fields.indexOf(b.field),
  );
  return { objects, notCollected };
}

export interface CollectedInventory {
  message: InventoryInput;
  notCollected: NotCollected[];
}

/**
 * Lists the cluster and builds its inventory message: the agent's cycle
 * and the seeder's kube-context mode, one path.
 */
export async function collectInventory(
  api: KubeApi,
  options: Omit<CollectOptions, 'apiServerUrl'> & ListOptions,
): Promise<CollectedInventory> {
  const { pageSize, concurrency, ...collect } = options;
  const listed = await listCluster(api, {
    ...(pageSize === undefined ? {} : { pageSize }),
    ...(concurrency === undefined ? {} : { concurrency }),
  });
  return {
    message: buildInventory(listed.objects, {
      ...collect,
      apiServerUrl: api.server,
    }),
    notCollected: listed.notCollected,
  };
}
