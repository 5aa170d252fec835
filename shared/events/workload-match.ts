/**
 * Which Kubernetes objects a workload owns, by the names Kubernetes
 * generates for them (the spec's events timeline, "A workload and what it
 * owns"; the what-changed timeline applies the same rule):
 *
 * - Deployment and Rollout `api`: the workload itself, its ReplicaSets
 *   `api-<pod-template-hash>` and their pods `api-<hash>-<suffix>`;
 * - StatefulSet `api`: itself and its pods `api-<ordinal>`;
 * - DaemonSet `api`: itself and its pods `api-<suffix>`.
 *
 * The pod-template hash is SafeEncodeString of a decimal number (a 32-bit
 * FNV hash printed in base 10): each digit becomes one of `4 5 6 7 8 9 b c
 * d f`, at most ten of them. A generated suffix is five characters of
 * `bcdfghjklmnpqrstvwxz2456789`. So `api` never takes `api-gateway`'s
 * pods, nor DaemonSet `api-v2`'s (v and 2 never occur in a hash). One
 * residual stays: a DaemonSet named like `api-db`, whose suffix uses only
 * hash characters, has pods (`api-db-x7k2p`) that fit Deployment `api`'s
 * pod shape.
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

const HASH = '[4-9bcdf]{1,10}';
const SUFFIX = '[bcdfghjklmnpqrstvwxz2456789]{5}';
const ORDINAL = '(0|[1-9][0-9]*)';

/** Anchored patterns (valid as JavaScript and as PostgreSQL regexes). */
export interface OwnedNamePatterns {
  /** The workload's ReplicaSets; null when none of its kinds has any. */
  replicaSet: string | null;
  pod: string;
}

/** A DNS-1123 name as a regex literal: only `.` is special in one. */
function literal(name: string): string {
  return name.replaceAll('.', '\\.');
}

/**
 * The names a workload called `name` owns, for each kind it may be (the
 * what-changed timeline takes a workload without its kind: any of the
 * four). `name` must already be a validated DNS-1123 subdomain.
 */
export function ownedNamePatterns(
  kinds: readonly WorkloadKind[],
  name: string,
): OwnedNamePatterns {
  const base = literal(name);
  const pods = new Set<string>();
  let replicaSet: string | null = null;
  for (const kind of kinds) {
    switch (kind) {
      case 'Deployment':
      case 'Rollout':
        replicaSet = `^${base}-${HASH}$`;
        pods.add(`${base}-${HASH}-${SUFFIX}`);
        break;
      case 'StatefulSet':
        pods.add(`${base}-${ORDINAL}`);
        break;
      case 'DaemonSet':
        pods.add(`${base}-${SUFFIX}`);
        break;
    }
  }
  const shapes = [...pods];
  const pod =
    shapes.length === 1 ? `^${shapes[0]}$` : `^(${shapes.join('|')})$`;
  return { replicaSet, pod };
}

/** Whether the object (kind, name) is the workload or one it owns. */
export function workloadOwns(
  kinds: readonly WorkloadKind[],
  name: string,
  object: { kind: string | null; name: string | null },
): boolean {
  if (object.name === null) return false;
  if (object.name === name) {
    return (kinds as readonly string[]).includes(object.kind ?? '');
  }
  const patterns = ownedNamePatterns(kinds, name);
  if (object.kind === 'ReplicaSet') {
    return (
      patterns.replicaSet !== null &&
      new RegExp(patterns.replicaSet).test(object.name)
    );
  }
  return object.kind === 'Pod' && new RegExp(patterns.pod).test(object.name);
}
