/**
 * The one-line summary of a workload change record (spec: "Workload change
 * records", column summary). It names at most three changes, then `+N more`,
 * and is cut at 300 characters.
 *
 * The spec's example names two changes and `+2 more` for four, so the three
 * are slots of the list, `+N more` included: up to three changes are all
 * named; with more, the first two are named and `+N more` counts the rest
 * (`image …; memory limit …; +2 more`).
 *
 * Wording, one phrase per change (`→` between the two sides, `unset` for a
 * side with no value):
 *
 * field                       | phrase
 * --------------------------- | ---------------------------------------------
 * replicas                    | `replicas 3 → 5`
 * replicas, manual scale only | `Deployment shop/api scaled 3 → 0`
 * strategy.type               | `strategy RollingUpdate → Recreate`
 * strategy.max_surge          | `max surge 25% → 1`
 * strategy.max_unavailable    | `max unavailable 25% → unset`
 * containers.<c> added        | `container sidecar added (envoy:v1.28)`
 * containers.<c> removed      | `container sidecar removed (envoy:v1)`
 * .image, same repository     | `image checkout-api 2.40.3 → 2.41.0`
 * .image, other repository    | `image reg-a/app:1 → reg-b/app:1`
 * .requests.cpu               | `cpu request 250m → 500m`
 * .requests.memory            | `memory request 512Mi → 1Gi`
 * .limits.cpu                 | `cpu limit unset → 2`
 * .limits.memory              | `memory limit 1Gi → 768Mi`
 * .env                        | `env +FOO` / `env -BAR`
 * .env_from                   | `envFrom +configmap:x` / `envFrom -secret:y`
 * .env_from, new prefix       | `envFrom configmap:a#OLD_ → configmap:a#NEW_`
 * .volumes                    | `volume +secret:y` / `volume -pvc:data`
 * init_containers.<c> added   | `init container migrate added (migrate:1)`
 * init_containers.<c>.<fact>  | as above, named: `env (init migrate) +FOO`
 * init_containers.order       | `init containers reordered`
 *
 * Rows starting with `.` are facts of `containers.<c>`; `removed` reads like
 * `added`, with the image the container had.
 *
 * Images: when only the tag or digest changed the phrase shows the image's
 * last path segment and the two versions; when the repository (registry or
 * path included) changed it shows both references. A digest keeps its
 * algorithm and the first 12 hex digits (`sha256:0123456789ab`); a bare
 * repository reads `untagged`. A container added or removed shows its image by
 * last path segment, tag and short digest.
 *
 * Which container: a phrase about a main container names it in parentheses
 * after the noun (`memory limit (api) 1Gi → 768Mi`) when the two sides
 * together name more than one main container. An init container is always
 * named, as `(init <c>)`, because "init" is what tells it apart from a main
 * container. An image phrase leaves the name out when the image's own name is
 * the container's name (`image api 2.40.3 → 2.41.0`, `image (init) migrate
 * 1 → 2`), since it already says which container changed.
 *
 * The cut: a summary longer than 300 characters (Unicode code points, so a
 * surrogate pair is never split) keeps its first 299, drops trailing spaces
 * and ends with `…`, so a cut line is visibly cut.
 */
import {
  type ContainerGroup,
  type FactChange,
  INIT_ORDER_FIELD,
} from './diff.ts';
import {
  formatImage,
  imageName,
  imageVersion,
  parseImageRef,
} from './image.ts';

/** How many parts the summary lists, `+N more` included. */
export const SUMMARY_PARTS = 3;

/** The summary's length limit, in characters (code points). */
export const SUMMARY_MAX_CHARS = 300;

/** Marks a summary that was cut. */
export const SUMMARY_ELLIPSIS = '…';

/** The text for a side with no value. */
export const UNSET = 'unset';

export interface PhraseContext {
  /** The two sides name more than one main container: name them in phrases. */
  nameMainContainers: boolean;
}

export interface WorkloadRef {
  kind: string;
  namespace: string;
  name: string;
}

/** `Deployment shop/checkout-api`. */
export function workloadSubject(workload: WorkloadRef): string {
  return `${workload.kind} ${workload.namespace}/${workload.name}`;
}

/** `Deployment shop/checkout-api scaled 3 → 0`, cut like any summary. */
export function scaledSummary(
  workload: WorkloadRef,
  replicas: FactChange,
): string {
  const from = show(replicas.before);
  const to = show(replicas.after);
  return cutSummary(`${workloadSubject(workload)} scaled ${from} → ${to}`);
}

/**
 * `Deployment shop/checkout-api: <phrase>; <phrase>; <phrase>` for up to
 * three changes, else `Deployment shop/checkout-api: <phrase>; <phrase>;
 * +N more` where N counts every change after the second; cut at 300
 * characters.
 */
export function changedSummary(
  workload: WorkloadRef,
  changes: readonly FactChange[],
  context: PhraseContext,
): string {
  return listSummary(
    workloadSubject(workload),
    changes.map((change) => describeChange(change, context)),
  );
}

/**
 * `<subject>: <phrase>; <phrase>; <phrase>` for up to three phrases, else the
 * first two and `+N more`; cut at 300 characters. Every change record's
 * summary (workloads, NetworkPolicies) is built by this one rule.
 */
export function listSummary(
  subject: string,
  phrases: readonly string[],
): string {
  const shown =
    phrases.length <= SUMMARY_PARTS
      ? phrases
      : phrases.slice(0, SUMMARY_PARTS - 1);
  const parts = [...shown];
  const more = phrases.length - shown.length;
  if (more > 0) parts.push(`+${more} more`);
  return cutSummary(`${subject}: ${parts.join('; ')}`);
}

/** At most {@link SUMMARY_MAX_CHARS} code points; a cut one ends with `…`. */
export function cutSummary(text: string): string {
  const chars = Array.from(text);
  if (chars.length <= SUMMARY_MAX_CHARS) return text;
  const kept = chars
    .slice(0, SUMMARY_MAX_CHARS - 1)
    .join('')
    .trimEnd();
  return `${kept}${SUMMARY_ELLIPSIS}`;
}

/** The phrase for one change, per the table at the top of this module. */
export function describeChange(
  change: FactChange,
  context: PhraseContext,
): string {
  const { field, before, after } = change;
  switch (field) {
    case 'replicas':
      return `replicas ${show(before)} → ${show(after)}`;
    case 'strategy.type':
      return `strategy ${show(before)} → ${show(after)}`;
    case 'strategy.max_surge':
      return `max surge ${show(before)} → ${show(after)}`;
    case 'strategy.max_unavailable':
      return `max unavailable ${show(before)} → ${show(after)}`;
    case INIT_ORDER_FIELD:
      return 'init containers reordered';
  }

  // Container names are DNS-1123 labels without dots, so the path splits
  // cleanly into group, container and fact.
  const [group, name, ...fact] = field.split('.');
  if (
    (group === 'containers' || group === 'init_containers') &&
    name !== undefined &&
    name !== ''
  ) {
    const container: ContainerInPhrase = { group, name };
    const phrase = describeContainerChange(container, fact, change, context);
    if (phrase !== undefined) return phrase;
  }
  return `${field} ${show(before)} → ${show(after)}`;
}

interface ContainerInPhrase {
  group: ContainerGroup;
  name: string;
}

function describeContainerChange(
  container: ContainerInPhrase,
  fact: readonly string[],
  change: FactChange,
  context: PhraseContext,
): string | undefined {
  const { before, after } = change;
  const q = qualifier(container, context, false);
  switch (fact.join('.')) {
    case '':
      return describeContainerPresence(container, before, after);
    case 'image':
      return describeImage(container, before, after, context);
    case 'requests.cpu':
      return `cpu request${q} ${show(before)} → ${show(after)}`;
    case 'requests.memory':
      return `memory request${q} ${show(before)} → ${show(after)}`;
    case 'limits.cpu':
      return `cpu limit${q} ${show(before)} → ${show(after)}`;
    case 'limits.memory':
      return `memory limit${q} ${show(before)} → ${show(after)}`;
    case 'env':
      return listPhrase(`env${q}`, before, after);
    case 'env_from':
      return listPhrase(`envFrom${q}`, before, after);
    case 'volumes':
      return listPhrase(`volume${q}`, before, after);
    default:
      return undefined;
  }
}

function describeContainerPresence(
  container: ContainerInPhrase,
  before: string | null,
  after: string | null,
): string {
  const noun =
    container.group === 'init_containers' ? 'init container' : 'container';
  if (before === null || after === null) {
    const image = after ?? before;
    const verb = after === null ? 'removed' : 'added';
    return `${noun} ${container.name} ${verb}${imageInParentheses(image)}`;
  }
  return `${noun} ${container.name} ${before} → ${after}`;
}

function imageInParentheses(image: string | null): string {
  if (image === null || image === '') return '';
  const ref = parseImageRef(image);
  return ` (${formatImage(ref, imageName(ref))})`;
}

function describeImage(
  container: ContainerInPhrase,
  before: string | null,
  after: string | null,
  context: PhraseContext,
): string {
  if (before === null || after === null) {
    const q = qualifier(container, context, false);
    return `image${q} ${show(before)} → ${show(after)}`;
  }
  const from = parseImageRef(before);
  const to = parseImageRef(after);
  const namesContainer =
    imageName(from) === container.name || imageName(to) === container.name;
  const q = qualifier(container, context, namesContainer);
  if (from.repository === to.repository) {
    const fromVersion = imageVersion(from);
    const toVersion = imageVersion(to);
    if (fromVersion !== toVersion) {
      return `image${q} ${imageName(from)} ${fromVersion} → ${toVersion}`;
    }
  } else {
    const fromText = formatImage(from, from.repository);
    const toText = formatImage(to, to.repository);
    if (fromText !== toText) return `image${q} ${fromText} → ${toText}`;
  }
  // The short forms hide the difference (digests alike in their first 12
  // digits, say): show the references as they are.
  return `image${q} ${before} → ${after}`;
}

/**
 * ` (api)`, ` (init migrate)`, ` (init)` or nothing; see "Which container" at
 * the top of this module.
 */
function qualifier(
  container: ContainerInPhrase,
  context: PhraseContext,
  phraseNamesContainer: boolean,
): string {
  if (container.group === 'init_containers') {
    return phraseNamesContainer ? ' (init)' : ` (init ${container.name})`;
  }
  return context.nameMainContainers && !phraseNamesContainer
    ? ` (${container.name})`
    : '';
}

/** `+added`, `-removed`, or both sides for a replaced entry. */
function listPhrase(
  noun: string,
  before: string | null,
  after: string | null,
): string {
  if (before === null && after !== null) return `${noun} +${after}`;
  if (after === null && before !== null) return `${noun} -${before}`;
  return `${noun} ${show(before)} → ${show(after)}`;
}

function show(value: string | null): string {
  return value ?? UNSET;
}
