/**
 * Which workloads an HPA manages in one snapshot (spec: "HPA scaling is not
 * recorded"). Only the snapshot's own HPAs count, so a scale in the same sync
 * that deletes its HPA is recorded as manual.
 */

export interface HpaFacts {
  namespace: string;
  /** The scaleTargetRef; null when the HPA has none. */
  target: { kind: string; name: string } | null;
}

export interface HpaTargets {
  /** Workloads some HPA targets. */
  readonly size: number;
  /**
   * True when an HPA in the same namespace targets this kind and name. Kinds
   * match exactly, as Kubernetes spells them (`Deployment`, `Rollout`).
   */
  isHpaManaged(namespace: string, kind: string, name: string): boolean;
}

/** The lookup of every workload an HPA of this snapshot targets. */
export function hpaTargets(hpas: Iterable<HpaFacts>): HpaTargets {
  const keys = new Set<string>();
  for (const hpa of hpas) {
    if (hpa.target === null) continue;
    keys.add(targetKey(hpa.namespace, hpa.target.kind, hpa.target.name));
  }
  return {
    size: keys.size,
    isHpaManaged: (namespace, kind, name) =>
      keys.has(targetKey(namespace, kind, name)),
  };
}

/**
 * A key no namespace, kind or name can forge: JSON keeps the three apart
 * whatever characters they hold.
 */
function targetKey(namespace: string, kind: string, name: string): string {
  return JSON.stringify([namespace, kind, name]);
}
