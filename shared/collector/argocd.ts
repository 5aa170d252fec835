/**
 * Argo CD Applications for the inventory (wire contract v1.1): names,
 * states and the source's location only. Helm values, `valuesObject`,
 * parameters, plugin env, kustomize patches and annotations are never read.
 * A repo URL whose userinfo cannot be removed leaves the app out (fail
 * closed).
 */
import type { ArgocdApplication } from '../wire/inventory.ts';
import { stripRepoUrlUserinfo } from '../wire/repo-url.ts';
import { array, type K8sObject, nonEmpty, str, stringMap } from './k8s.ts';

export function argocdApplicationRow(
  o: K8sObject,
): ArgocdApplication | undefined {
  const spec = o.spec ?? {};
  const status = o.status ?? {};
  const source = spec.source ?? array(spec.sources)[0] ?? {};
  const written = nonEmpty(source.repoURL);
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
    project: str(spec.project),
    destination: {
      server: nonEmpty(spec.destination?.server),
      name: nonEmpty(spec.destination?.name),
      namespace: nonEmpty(spec.destination?.namespace),
    },
    source: {
      repo_url: repoUrl,
      path: nonEmpty(source.path),
      chart: nonEmpty(source.chart),
      target_revision: nonEmpty(source.targetRevision),
    },
    sync_status: str(status.sync?.status),
    health_status: str(status.health?.status),
    revision:
      str(status.sync?.revision) ?? str(array(status.sync?.revisions)[0]),
    operation: operation
      ? {
          phase: str(operation.phase),
          started_at: str(operation.startedAt),
          finished_at: str(operation.finishedAt),
          initiated_by:
            nonEmpty(initiatedBy?.username) ??
            (initiatedBy?.automated === true ? 'automated' : null),
        }
      : null,
    resources: array(status.resources).map((r) => ({
      group: nonEmpty(r?.group),
      kind: str(r?.kind),
      namespace: nonEmpty(r?.namespace),
      name: str(r?.name),
    })),
  };
}
