/**
 * Argo CD Applications for the inventory (wire contract v1.1): names,
 * states and the source's location only. Helm values, `valuesObject`,
 * parameters, plugin env, kustomize patches and annotations are never read.
 * A repo URL whose userinfo cannot be removed leaves the app out (fail
 * closed). An Application is a CRD's object: every string but its name,
 * namespace and labels is unvalidated, so each is made storable (k8s.ts).
 */
import type { ArgocdApplication } from '../wire/inventory.ts';
import { stripRepoUrlUserinfo } from '../wire/repo-url.ts';
import {
  array,
  freeText,
  type K8sObject,
  nonEmptyFreeText,
  str,
  stringMap,
} from './k8s.ts';

export function argocdApplicationRow(
  o: K8sObject,
): ArgocdApplication | undefined {
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const source = spec.source ?? array(spec.sources)[0] ?? {};
  const written = nonEmptyFreeText(source.repoURL);
  const repoUrl = written === null ? null : stripRepoUrlUserinfo(written);
  if (repoUrl === undefined) return undefined;
  const operation = status.operationState;
  const initiatedBy = operation?.operation?.initiatedBy;
  return {
    namespace: String(o.metadata.namespace),
    name: String(o.metadata.name),
    uid: str(o.metadata.uid),
    labels: stringMap(o.metadata.labels),
    created_at: str(o.metadata.creationTimestamp),
    project: freeText(spec.project),
    destination: {
      server: nonEmptyFreeText(spec.destination?.server),
      name: nonEmptyFreeText(spec.destination?.name),
      namespace: nonEmptyFreeText(spec.destination?.namespace),
    },
    source: {
      repo_url: repoUrl,
      path: nonEmptyFreeText(source.path),
      chart: nonEmptyFreeText(source.chart),
      target_revision: nonEmptyFreeText(source.targetRevision),
    },
    sync_status: freeText(status.sync?.status),
    health_status: freeText(status.health?.status),
    revision:
      freeText(status.sync?.revision) ??
      freeText(array(status.sync?.revisions)[0]),
    operation: operation
      ? {
          phase: freeText(operation.phase),
          started_at: str(operation.startedAt),
          finished_at: str(operation.finishedAt),
          initiated_by:
            nonEmptyFreeText(initiatedBy?.username) ??
            (initiatedBy?.automated === true ? 'automated' : null),
        }
      : null,
    resources: array(status.resources).map((r) => ({
      group: nonEmptyFreeText(r?.group),
      kind: freeText(r?.kind),
      namespace: nonEmptyFreeText(r?.namespace),
      name: freeText(r?.name),
    })),
  };
}
