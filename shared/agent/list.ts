/**
 * Lists what the collector reads (shared/agent/resources.ts, `COLLECTED`)
 * from a cluster, paged (`limit` and `continue`), into the collector's
 * input. The agent and the seeder both read a cluster through this, so
 * they can never disagree about what a cluster holds.
 *
 * The core kinds every cluster serves are listed; any failure of one fails
 * the whole collection (the apiserver unreachable, a 5xx, a 403 on a core
 * kind), since a partial list would prune rows that still exist. The
 * optional kinds (`optional` in resources.ts: CRDs and aggregated APIs) are
 * listed only when their group's discovery lists them (shared/agent/
 * discovery.ts, read once per cycle), and any way the apiserver says one
 * is not here (404 with or without a Status, a 503 from an unavailable
 * APIService, a 403) leaves that kind alone undefined, "not collected": its
 * array is left out of the message (metrics: usage is null) and the
 * backend prunes nothing of it.
 */
import { LAST_APPLIED } from '../collector/annotations.ts';
import {
  buildInventory,
  type ClusterObjects,
  type CollectOptions,
} from '../collector/collect.ts';
import type { K8sObject } from '../collector/k8s.ts';
import type { InventoryInput } from '../wire/inventory.ts';
import {
  type Absence,
  absenceOf,
  discoverAbsent,
  type NotCollectedReason,
  resourceName,
} from './discovery.ts';
import type { KubeApi } from './kube-api.ts';
import { type ApiResource, COLLECTED, resourcePath } from './resources.ts';

export type CollectedField = keyof typeof COLLECTED;

export interface NotCollected {
  field: CollectedField;
  /** `applications.argoproj.io/v1alpha1`. */
  resource: string;
  reason: NotCollectedReason;
  /** What answered: the discovery that lacks it, or the HTTP status and message. */
  detail: string;
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

const FIELDS = Object.keys(COLLECTED) as CollectedField[];
const OPTIONAL = FIELDS.filter((f) => COLLECTED[f].optional === true);

/**
 * What the inventory keeps of a listed object: all of it but its
 * `metadata.managedFields` and its `kubectl.kubernetes.io/last-applied-
 * configuration` annotation, dropped as each page is parsed. Every object
 * of every kind is held until the whole cluster is listed (the pod limit
 * cuts only then, in the collector), and these two are the largest parts
 * the collector never reads: managedFields is about 40% of a pod's JSON,
 * last-applied a copy of the whole object as applied (safeAnnotations
 * drops it from every row). Kept raw, they took a 512Mi agent past its
 * heap on a cluster of about 12,000 pods. The live reads (responder.ts)
 * list without this and answer with the objects as served.
 */
export function slimForInventory(object: K8sObject): K8sObject {
  const metadata = object?.metadata;
  if (typeof metadata !== 'object' || metadata === null) return object;
  const annotations = metadata.annotations;
  const lastApplied =
    typeof annotations === 'object' &&
    annotations !== null &&
    Object.hasOwn(annotations, LAST_APPLIED);
  if (!lastApplied && !Object.hasOwn(metadata, 'managedFields')) return object;
  // New objects rather than `delete`, which leaves V8 a slower, larger map.
  const { managedFields: _, ...kept } = metadata;
  if (lastApplied) {
    const { [LAST_APPLIED]: __, ...others } = annotations;
    kept.annotations = others;
  }
  return { ...object, metadata: kept };
}

/** Reads every collected kind, plus `/version`, slimmed (slimForInventory). */
export async function listCluster(
  api: KubeApi,
  options: ListOptions = {},
): Promise<ListedCluster> {
  const pageSize = options.pageSize ?? 500;
  const objects: ClusterObjects = {};
  const notCollected: NotCollected[] = [];
  const skip = (field: CollectedField, absence: Absence) =>
    notCollected.push({
      field,
      resource: resourceName(COLLECTED[field]),
      ...absence,
    });

  try {
    objects.version = await api.getJson('/version');
  } catch (error) {
    throw new CollectionError(
      `the Kubernetes API at ${api.server} did not answer /version: ${(error as Error).message}`,
      { cause: error },
    );
  }

  let absent: Map<ApiResource, Absence>;
  try {
    absent = await discoverAbsent(
      api,
      OPTIONAL.map((f) => COLLECTED[f]),
    );
  } catch (error) {
    throw new CollectionError(
      `API discovery failed: ${(error as Error).message}`,
      { cause: error },
    );
  }
  const fields: CollectedField[] = [];
  for (const field of FIELDS) {
    const absence = absent.get(COLLECTED[field]);
    if (absence === undefined) fields.push(field);
    else skip(field, absence);
  }

  const next = (() => {
    let i = 0;
    return () => fields[i++];
  })();
  const worker = async () => {
    for (let field = next(); field !== undefined; field = next()) {
      const resource = COLLECTED[field];
      try {
        const items: K8sObject[] = await api.listAll(
          resourcePath(resource),
          pageSize,
          {},
          slimForInventory,
        );
        objects[field] = items;
      } catch (error) {
        // Discovery listed it, yet the list says it is gone (a CRD deleted
        // since), unavailable or refused: that kind alone is not collected.
        const absence = resource.optional ? absenceOf(error) : undefined;
        if (absence !== undefined) {
          skip(field, absence);
          continue;
        }
        throw new CollectionError(
          `listing ${resourceName(resource)} failed: ${(error as Error).message}`,
          { cause: error },
        );
      }
    }
  };
  await Promise.all(
    Array.from({ length: options.concurrency ?? 4 }, () => worker()),
  );
  notCollected.sort(
    (a, b) => FIELDS.indexOf(a.field) - FIELDS.indexOf(b.field),
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
