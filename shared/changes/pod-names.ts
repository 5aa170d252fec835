/**
 * Which object names a workload generates (spec: What Changed, "Matching a
 * workload"): its ReplicaSets `<workload>-<hash>` (Deployment, Rollout) and
 * its pods `<workload>-<hash>-<5>` (Deployment, Rollout), `<workload>-<n>`
 * (StatefulSet), `<workload>-<5>` (DaemonSet).
 *
 * The 5-character suffix uses Kubernetes' vowel-free SafeEncodeString
 * alphabet; the hash is the SafeEncoded decimal digits of a 32-bit hash,
 * which SafeEncoding maps onto only 4 5 6 7 8 9 b c d f (at most 10 of
 * them). So `api-gateway-…` never matches `api`, nor does DaemonSet
 * `api-v2`.
 */

export const WORKLOAD_KINDS = [
  'Deployment',
  'StatefulSet',
  'DaemonSet',
  'Rollout',
] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

/** The label Kubernetes mixins put a workload's name in, per kind. */
export const WORKLOAD_LABEL: Record<WorkloadKind, string> = {
  Deployment: 'deployment',
  StatefulSet: 'statefulset',
  DaemonSet: 'daemonset',
  Rollout: 'rollout',
};

const SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';
const HASH = '[4-9bcdf]{1,10}';

/** A DNS-1123 name with `.` escaped: the only character regexes care for. */
function literal(name: string): string {
  return name.replaceAll('.', '\\.');
}

/**
 * An anchored regular expression (PostgreSQL's and JavaScript's syntax
 * alike) matching the names of the pods `kinds` named `name` generate.
 * `name` must already be a validated DNS-1123 subdomain.
 */
export function podNamePattern(
  name: string,
  kinds: readonly WorkloadKind[],
): string {
  const n = literal(name);
  const shapes = new Set<string>();
  for (const kind of kinds) {
    if (kind === 'Deployment' || kind === 'Rollout') {
      shapes.add(`${n}-${HASH}-${SUFFIX}`);
    } else if (kind === 'StatefulSet') shapes.add(`${n}-[0-9]+`);
    else shapes.add(`${n}-${SUFFIX}`);
  }
  return `^(${[...shapes].join('|')})$`;
}

/** The names of the ReplicaSets `kinds` named `name` own (none for some). */
export function replicaSetNamePattern(
  name: string,
  kinds: readonly WorkloadKind[],
): string | undefined {
  return kinds.some((k) => k === 'Deployment' || k === 'Rollout')
    ? `^${literal(name)}-${HASH}$`
    : undefined;
}
