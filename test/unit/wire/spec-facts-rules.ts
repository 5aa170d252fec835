/**
 * The spec's "Workload Spec Facts" rules, as a checker for fixtures: it
 * returns every broken rule, so a test can assert the list is empty.
 */
import type { SpecFacts } from '../../../shared/wire/spec-facts.ts';

const QUANTITY = /^(\d+(\.\d+)?)(m|k|Ki|Mi|Gi|Ti|Pi|Ei|M|G|T|P|E)?$/;
const ENV_FROM = /^(configmap|secret):[a-z0-9]([-a-z0-9.]*[a-z0-9])?(#.+)?$/;
const VOLUME_REF =
  /^(configmap|secret|pvc|pvc-template):[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function sorted(list: readonly string[]): boolean {
  for (let i = 1; i < list.length; i++) {
    if ((list[i - 1] as string) >= (list[i] as string)) return false;
  }
  return true;
}

export function specFactsViolations(
  where: string,
  facts: SpecFacts,
  kind: string,
): string[] {
  const broken: string[] = [];
  if (kind === 'DaemonSet' && facts.replicas !== undefined) {
    broken.push(`${where}: a DaemonSet has no replicas`);
  }
  if (kind !== 'DaemonSet' && facts.replicas === undefined) {
    broken.push(`${where}: replicas missing`);
  }
  if (facts.facts_version < 1) broken.push(`${where}: facts_version`);
  const main = facts.containers.filter((c) => !c.init);
  const firstInit = facts.containers.findIndex((c) => c.init);
  if (
    firstInit !== -1 &&
    facts.containers.slice(firstInit).some((c) => !c.init)
  ) {
    broken.push(`${where}: init containers must come after main ones`);
  }
  if (!sorted(main.map((c) => c.name))) {
    broken.push(`${where}: main containers not sorted by name`);
  }
  for (const c of facts.containers) {
    const at = `${where}.${c.name}`;
    for (const [list, name] of [
      [c.env_names, 'env_names'],
      [c.env_from, 'env_from'],
      [c.volume_refs, 'volume_refs'],
    ] as const) {
      if (!sorted(list)) broken.push(`${at}.${name} not sorted and unique`);
    }
    for (const ref of c.env_from) {
      if (!ENV_FROM.test(ref)) broken.push(`${at}.env_from ${ref}`);
    }
    for (const ref of c.volume_refs) {
      if (!VOLUME_REF.test(ref)) broken.push(`${at}.volume_refs ${ref}`);
    }
    for (const name of c.env_names) {
      if (name.includes('=')) broken.push(`${at}.env_names holds a value`);
    }
    for (const amounts of [c.requests, c.limits]) {
      for (const q of [amounts?.cpu, amounts?.memory]) {
        if (q !== undefined && !QUANTITY.test(q)) {
          broken.push(`${at}: quantity ${q}`);
        }
      }
    }
  }
  return broken;
}
