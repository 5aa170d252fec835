/**
 * The field-level diff of two workload spec-fact sets (spec: "Workload change
 * records"). Pure: no database, no clock, no I/O.
 *
 * Output order is fixed, so the same pair of fact sets always yields the same
 * list (and the summary, which names the first three, is stable):
 *
 *   1. `replicas` (left out when an HPA manages the workload)
 *   2. `strategy.type`, `strategy.max_surge`, `strategy.max_unavailable`
 *   3. main containers, by name (code-unit order, as the agent sorts them);
 *      per container: added/removed (`containers.<c>`, one entry and nothing
 *      else), else `image`, `requests.cpu`, `requests.memory`, `limits.cpu`,
 *      `limits.memory`, `env`, `env_from`, `volumes`
 *   4. init containers, by name, with the same per-container fields under
 *      `init_containers.<c>`
 *   5. `init_containers.order`, last
 *
 * Within `env` and `volumes` entries follow the name/ref order; within
 * `env_from` they follow the ref's object part (before the first `#`).
 */
import type { ContainerFacts, SpecFacts } from '../wire/spec-facts.ts';

/** One changed fact. A side is null when it had no value there. */
export interface FactChange {
  field: string;
  before: string | null;
  after: string | null;
}

export interface DiffOptions {
  /** An HPA in the same snapshot targets the workload: replicas are its own. */
  hpaManaged: boolean;
}

/** The two container groups: field path prefixes of the spec's table. */
export type ContainerGroup = 'containers' | 'init_containers';

/** Field of the init-container reorder entry. */
export const INIT_ORDER_FIELD = 'init_containers.order';

/**
 * Separator of the init-container name lists in an `init_containers.order`
 * entry. Container names are DNS-1123 labels, so they never contain it.
 */
export const INIT_ORDER_SEPARATOR = ',';

/**
 * Every fact that differs between `before` and `after`, in the order described
 * at the top of this module. Reordering main containers is not a change (the
 * agent sorts them by name); reordering init containers is one
 * `init_containers.order` entry whose sides are the full init-container name
 * lists, comma-joined, in run order. An init container that was only added or
 * removed does not count as a reorder: only the relative order of the init
 * containers present on both sides is compared.
 */
export function diffSpecFacts(
  before: SpecFacts,
  after: SpecFacts,
  options: DiffOptions,
): FactChange[] {
  const changes: FactChange[] = [];

  if (!options.hpaManaged) {
    pushIfChanged(
      changes,
      'replicas',
      numberOrNull(before.replicas),
      numberOrNull(after.replicas),
    );
  }

  pushIfChanged(
    changes,
    'strategy.type',
    before.strategy?.type ?? null,
    after.strategy?.type ?? null,
  );
  pushIfChanged(
    changes,
    'strategy.max_surge',
    before.strategy?.max_surge ?? null,
    after.strategy?.max_surge ?? null,
  );
  pushIfChanged(
    changes,
    'strategy.max_unavailable',
    before.strategy?.max_unavailable ?? null,
    after.strategy?.max_unavailable ?? null,
  );

  const from = splitContainers(before.containers);
  const to = splitContainers(after.containers);
  diffContainerGroup(changes, 'containers', from.main, to.main);
  diffContainerGroup(changes, 'init_containers', from.init, to.init);

  if (isReordered(from.initOrder, to.initOrder)) {
    changes.push({
      field: INIT_ORDER_FIELD,
      before: from.initOrder.join(INIT_ORDER_SEPARATOR),
      after: to.initOrder.join(INIT_ORDER_SEPARATOR),
    });
  }

  return changes;
}

/** Code-unit order, the same as the agent's byte-wise sort for ASCII names. */
export function compareCodeUnits(a: string, b: string): number {
  if (a < b) return -1;
  if (a > b) return 1;
  return 0;
}

interface SplitContainers {
  main: Map<string, ContainerFacts>;
  init: Map<string, ContainerFacts>;
  /** Init container names in run order. */
  initOrder: string[];
}

/**
 * Kubernetes keeps container names unique within a pod; should a fact set
 * repeat one anyway, the first occurrence wins so the diff stays defined.
 */
function splitContainers(
  containers: readonly ContainerFacts[],
): SplitContainers {
  const main = new Map<string, ContainerFacts>();
  const init = new Map<string, ContainerFacts>();
  const initOrder: string[] = [];
  for (const container of containers) {
    const group = container.init === true ? init : main;
    if (group.has(container.name)) continue;
    group.set(container.name, container);
    if (container.init === true) initOrder.push(container.name);
  }
  return { main, init, initOrder };
}

function diffContainerGroup(
  changes: FactChange[],
  group: ContainerGroup,
  before: ReadonlyMap<string, ContainerFacts>,
  after: ReadonlyMap<string, ContainerFacts>,
): void {
  const names = sortedUnion(before.keys(), after.keys());
  for (const name of names) {
    const prefix = `${group}.${name}`;
    const from = before.get(name);
    const to = after.get(name);
    if (from === undefined || to === undefined) {
      // A whole container came or went: one entry carrying its image. Its
      // resources, env and volumes are part of that event, not changes of
      // their own.
      changes.push({
        field: prefix,
        before: from?.image ?? null,
        after: to?.image ?? null,
      });
      continue;
    }
    diffContainer(changes, prefix, from, to);
  }
}

function diffContainer(
  changes: FactChange[],
  prefix: string,
  before: ContainerFacts,
  after: ContainerFacts,
): void {
  pushIfChanged(changes, `${prefix}.image`, before.image, after.image);
  pushIfChanged(
    changes,
    `${prefix}.requests.cpu`,
    before.requests?.cpu ?? null,
    after.requests?.cpu ?? null,
  );
  pushIfChanged(
    changes,
    `${prefix}.requests.memory`,
    before.requests?.memory ?? null,
    after.requests?.memory ?? null,
  );
  pushIfChanged(
    changes,
    `${prefix}.limits.cpu`,
    before.limits?.cpu ?? null,
    after.limits?.cpu ?? null,
  );
  pushIfChanged(
    changes,
    `${prefix}.limits.memory`,
    before.limits?.memory ?? null,
    after.limits?.memory ?? null,
  );
  diffNameList(changes, `${prefix}.env`, before.env_names, after.env_names);
  diffEnvFrom(changes, `${prefix}.env_from`, before.env_from, after.env_from);
  diffNameList(
    changes,
    `${prefix}.volumes`,
    before.volume_refs,
    after.volume_refs,
  );
}

/** One entry per name that is on one side only: removed (before) or added. */
function diffNameList(
  changes: FactChange[],
  field: string,
  before: readonly string[],
  after: readonly string[],
): void {
  const from = new Set(before);
  const to = new Set(after);
  for (const value of sortedUnion(from, to)) {
    const inBefore = from.has(value);
    const inAfter = to.has(value);
    if (inBefore && !inAfter)
      changes.push({ field, before: value, after: null });
    if (inAfter && !inBefore)
      changes.push({ field, before: null, after: value });
  }
}

/**
 * Like {@link diffNameList}, except that a ref whose object part (before the
 * first `#`) is on both sides with a different prefix is one entry:
 * `configmap:app#OLD_` → `configmap:app#NEW_`. Adding or dropping a prefix
 * (`configmap:app` → `configmap:app#APP_`) is a prefix change as well. Should
 * one object be listed several times, removed and added refs of that object
 * are paired in sorted order and any left over stand alone.
 */
function diffEnvFrom(
  changes: FactChange[],
  field: string,
  before: readonly string[],
  after: readonly string[],
): void {
  const from = new Set(before);
  const to = new Set(after);
  const removed = groupByObject([...from].filter((ref) => !to.has(ref)));
  const added = groupByObject([...to].filter((ref) => !from.has(ref)));
  for (const object of sortedUnion(removed.keys(), added.keys())) {
    const gone = removed.get(object) ?? [];
    const came = added.get(object) ?? [];
    const pairs = Math.max(gone.length, came.length);
    for (let i = 0; i < pairs; i += 1) {
      changes.push({ field, before: gone[i] ?? null, after: came[i] ?? null });
    }
  }
}

/** The object part of an envFrom ref: everything before the first `#`. */
export function envFromObject(ref: string): string {
  const hash = ref.indexOf('#');
  return hash < 0 ? ref : ref.slice(0, hash);
}

function groupByObject(refs: readonly string[]): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const ref of [...refs].sort(compareCodeUnits)) {
    const object = envFromObject(ref);
    const group = groups.get(object);
    if (group === undefined) groups.set(object, [ref]);
    else group.push(ref);
  }
  return groups;
}

/** True when the init containers on both sides run in a different order. */
function isReordered(before: readonly string[], after: readonly string[]) {
  const inAfter = new Set(after);
  const inBefore = new Set(before);
  const common = before.filter((name) => inAfter.has(name));
  const commonAfter = after.filter((name) => inBefore.has(name));
  return common.some((name, i) => commonAfter[i] !== name);
}

function sortedUnion(a: Iterable<string>, b: Iterable<string>): string[] {
  return [...new Set([...a, ...b])].sort(compareCodeUnits);
}

function numberOrNull(value: number | undefined): string | null {
  return value === undefined ? null : String(value);
}

function pushIfChanged(
  changes: FactChange[],
  field: string,
  before: string | null,
  after: string | null,
): void {
  if (before !== after) changes.push({ field, before, after });
}
