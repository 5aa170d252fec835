/**
 * A workload's spec facts (spec: "Workload Spec Facts"), read from its pod
 * template: names and references only. The fields read are exactly these;
 * nothing else of the object is looked at, which is what the enforcement
 * tests in test/unit/collector check:
 *
 * - `spec.replicas`, the strategy's type, `maxSurge` and `maxUnavailable`;
 * - per container: `name`, `image`, `resources.{requests,limits}.{cpu,memory}`,
 *   `env[].name`, `envFrom[].{configMapRef,secretRef}.name` and `prefix`,
 *   `volumeMounts[].name` and `volumeDevices[].name` (to find the volume);
 * - per volume: `configMap.name`, `secret.secretName`,
 *   `persistentVolumeClaim.claimName`, `projected.sources[].{configMap,
 *   secret}.name`, `csi.nodePublishSecretRef.name`; and a StatefulSet's
 *   `volumeClaimTemplates[].metadata.name`.
 *
 * Never read: env values and valueFrom selectors, key selectors, field
 * paths, volume items, CSI driver and attributes, args, command, any
 * annotation or label.
 *
 * Every string sent is storable (k8s.ts, storableText): a Rollout's
 * template is a CRD's, which Kubernetes does not validate, and even a
 * Deployment's image and volume sources' names are barely checked.
 */
import type {
  ContainerFacts,
  ResourceFacts,
  SpecFacts,
  StrategyFacts,
} from '../wire/spec-facts.ts';
import {
  array,
  byString,
  intOrStringText,
  type K8sObject,
  nonEmpty,
  nonEmptyFreeText,
  sortedUnique,
  storableText,
} from './k8s.ts';
import { canonicalQuantity } from './quantity.ts';

/**
 * Bump on any change to how facts are normalized (spec: facts_version): the
 * backend takes facts of another version as a new baseline, not as changes.
 * 2: a blueGreen Rollout's maxUnavailable is read.
 */
export const FACTS_VERSION = 2;

function resources(amounts: K8sObject): ResourceFacts | undefined {
  const cpu = canonicalQuantity(amounts?.cpu);
  const memory = canonicalQuantity(amounts?.memory);
  if (cpu === undefined && memory === undefined) return undefined;
  const out: ResourceFacts = {};
  if (cpu !== undefined) out.cpu = cpu;
  if (memory !== undefined) out.memory = memory;
  return out;
}

function envFromRef(source: K8sObject): string | undefined {
  const configMap = nonEmptyFreeText(source?.configMapRef?.name);
  const secret = nonEmptyFreeText(source?.secretRef?.name);
  const ref = configMap
    ? `configmap:${configMap}`
    : secret
      ? `secret:${secret}`
      : undefined;
  if (ref === undefined) return undefined;
  const prefix = nonEmptyFreeText(source?.prefix);
  return prefix === null ? ref : `${ref}#${prefix}`;
}

/** What backs one volume: its refs (none for emptyDir, hostPath, ...). */
function volumeRefs(volume: K8sObject): string[] {
  const refs: string[] = [];
  const configMap = nonEmptyFreeText(volume?.configMap?.name);
  if (configMap) refs.push(`configmap:${configMap}`);
  const secret = nonEmptyFreeText(volume?.secret?.secretName);
  if (secret) refs.push(`secret:${secret}`);
  const claim = nonEmptyFreeText(volume?.persistentVolumeClaim?.claimName);
  if (claim) refs.push(`pvc:${claim}`);
  for (const source of array(volume?.projected?.sources)) {
    const cm = nonEmptyFreeText(source?.configMap?.name);
    if (cm) refs.push(`configmap:${cm}`);
    const sec = nonEmptyFreeText(source?.secret?.name);
    if (sec) refs.push(`secret:${sec}`);
  }
  const csiSecret = nonEmptyFreeText(volume?.csi?.nodePublishSecretRef?.name);
  if (csiSecret) refs.push(`secret:${csiSecret}`);
  return refs;
}

function containerFacts(
  container: K8sObject,
  init: boolean,
  volumes: Map<string, string[]>,
): ContainerFacts {
  const mounted = [
    ...array(container?.volumeMounts),
    ...array(container?.volumeDevices),
  ];
  const facts: ContainerFacts = {
    name: storableText(String(container?.name ?? '')),
    image: storableText(String(container?.image ?? '')),
    env_names: sortedUnique(
      array(container?.env)
        .map((e) => nonEmptyFreeText(e?.name))
        .filter((n): n is string => n !== null),
    ),
    env_from: sortedUnique(
      array(container?.envFrom)
        .map(envFromRef)
        .filter((r): r is string => r !== undefined),
    ),
    volume_refs: sortedUnique(
      mounted.flatMap((m) => volumes.get(String(m?.name)) ?? []),
    ),
  };
  const requests = resources(container?.resources?.requests);
  const limits = resources(container?.resources?.limits);
  // A fixed key order, so equal facts are equal bytes.
  return {
    name: facts.name,
    image: facts.image,
    ...(init ? { init: true } : {}),
    ...(requests ? { requests } : {}),
    ...(limits ? { limits } : {}),
    env_names: facts.env_names,
    env_from: facts.env_from,
    volume_refs: facts.volume_refs,
  };
}

function strategyFacts(
  kind: string,
  spec: K8sObject,
): StrategyFacts | undefined {
  let type: string | undefined;
  let rolling: K8sObject;
  if (kind === 'Rollout') {
    if (spec?.strategy?.canary) {
      type = 'canary';
      rolling = spec.strategy.canary;
    } else if (spec?.strategy?.blueGreen) {
      type = 'blueGreen';
      // maxUnavailable bounds a restart's pods; blueGreen has no maxSurge.
      rolling = spec.strategy.blueGreen;
    }
  } else if (kind === 'Deployment') {
    type = nonEmpty(spec?.strategy?.type) ?? undefined;
    rolling = spec?.strategy?.rollingUpdate;
  } else {
    type = nonEmpty(spec?.updateStrategy?.type) ?? undefined;
    rolling = spec?.updateStrategy?.rollingUpdate;
  }
  if (type === undefined) return undefined;
  const out: StrategyFacts = { type };
  const surge = intOrStringText(rolling?.maxSurge);
  if (surge !== undefined) out.max_surge = storableText(surge);
  const unavailable = intOrStringText(rolling?.maxUnavailable);
  if (unavailable !== undefined) {
    out.max_unavailable = storableText(unavailable);
  }
  return out;
}

/**
 * The facts of a Deployment, StatefulSet, DaemonSet or Rollout, or
 * undefined when it has none to report (a Rollout with `workloadRef` and no
 * inline template: unknown, never an empty set).
 */
export function workloadSpecFacts(workload: K8sObject): SpecFacts | undefined {
  const kind = String(workload?.kind ?? '');
  const spec = workload?.spec;
  const podSpec = spec?.template?.spec;
  if (podSpec === undefined || podSpec === null) return undefined;

  const volumes = new Map<string, string[]>();
  if (kind === 'StatefulSet') {
    for (const template of array(spec?.volumeClaimTemplates)) {
      const name = nonEmpty(template?.metadata?.name);
      if (name) volumes.set(name, [`pvc-template:${storableText(name)}`]);
    }
  }
  for (const volume of array(podSpec.volumes)) {
    const name = nonEmpty(volume?.name);
    if (name) volumes.set(name, volumeRefs(volume));
  }

  const main = array(podSpec.containers)
    .map((c) => containerFacts(c, false, volumes))
    .sort((a, b) => byString(a.name, b.name));
  const init = array(podSpec.initContainers).map((c) =>
    containerFacts(c, true, volumes),
  );

  let replicas: number | undefined;
  if (kind !== 'DaemonSet') {
    const written = spec?.replicas;
    // Argo defaults an unset Rollout to 1, as the apiserver does a Deployment.
    replicas =
      typeof written === 'number' && Number.isInteger(written) && written >= 0
        ? written
        : 1;
  }
  const strategy = strategyFacts(kind, spec);
  return {
    ...(replicas !== undefined ? { replicas } : {}),
    ...(strategy ? { strategy } : {}),
    containers: [...main, ...init],
    facts_version: FACTS_VERSION,
  };
}
