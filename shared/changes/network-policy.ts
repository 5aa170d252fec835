/**
 * A NetworkPolicy change record (spec: What Changed, "NetworkPolicy
 * changes"): the diff of one policy's pod selector, policy types and rules
 * between two syncs, and the change_events row it becomes. Pure: no database,
 * no clock.
 *
 * Each side is rendered in a canonical text first, so that two policies that
 * mean the same (keys in another order, a rule list reordered) diff as equal:
 *
 * field          | before / after
 * -------------- | -------------------------------------------------------
 * pod_selector   | `app=api,tier in (a,b),!legacy`; `all pods` when empty
 * policy_types   | sorted and comma-joined: `Egress,Ingress`
 * ingress        | one entry per rule on one side only (added: before null)
 * egress         | the same, for egress rules
 *
 * A rule reads `from namespaces(team=a) pods(app=web), cidr 10.0.0.0/8
 * except 10.1.0.0/16 on TCP/80, TCP/8000-8080` (`to` for egress; `anywhere`
 * and `all ports` for an empty side). Rules are a set: Kubernetes ORs them,
 * so their order means nothing.
 *
 * A policy carries selectors, CIDRs and ports only, no values of anything
 * else: the rendering names exactly what the policy selects.
 */
import { compareCodeUnits, type FactChange } from './diff.ts';
import { MAX_RECORDED_CHANGES } from './record.ts';
import { listSummary, workloadSubject } from './summary.ts';

export const NETWORK_POLICY_KIND = 'NetworkPolicy';
export const NETWORK_POLICY_CHANGED = 'network_policy_changed';

/** The facts of a policy the diff compares, as the wire and table hold them. */
export interface NetworkPolicyFacts {
  pod_selector: unknown;
  policy_types: readonly string[];
  ingress: readonly unknown[];
  egress: readonly unknown[];
}

export interface NetworkPolicyChangeInput {
  clusterId: string;
  clusterName: string;
  namespace: string;
  name: string;
  before: NetworkPolicyFacts;
  after: NetworkPolicyFacts;
}

export interface NetworkPolicyChangeRecord {
  eventType: typeof NETWORK_POLICY_CHANGED;
  summary: string;
  details: {
    cluster_id: string;
    cluster: string;
    kind: typeof NETWORK_POLICY_KIND;
    namespace: string;
    name: string;
    change_count: number;
    truncated: boolean;
    changes: FactChange[];
  };
}

/** Every difference, in the order of the table at the top of this module. */
export function diffNetworkPolicy(
  before: NetworkPolicyFacts,
  after: NetworkPolicyFacts,
): FactChange[] {
  const changes: FactChange[] = [];
  const selectorBefore = renderSelector(before.pod_selector, 'all pods');
  const selectorAfter = renderSelector(after.pod_selector, 'all pods');
  if (selectorBefore !== selectorAfter) {
    changes.push({
      field: 'pod_selector',
      before: selectorBefore,
      after: selectorAfter,
    });
  }
  const typesBefore = [...before.policy_types].sort(compareCodeUnits).join(',');
  const typesAfter = [...after.policy_types].sort(compareCodeUnits).join(',');
  if (typesBefore !== typesAfter) {
    changes.push({
      field: 'policy_types',
      before: typesBefore || null,
      after: typesAfter || null,
    });
  }
  diffRules(changes, 'ingress', before.ingress, after.ingress);
  diffRules(changes, 'egress', before.egress, after.egress);
  return changes;
}

/** The record for one policy, or undefined when nothing it selects changed. */
export function buildNetworkPolicyChange(
  input: NetworkPolicyChangeInput,
): NetworkPolicyChangeRecord | undefined {
  const changes = diffNetworkPolicy(input.before, input.after);
  if (changes.length === 0) return undefined;
  const subject = workloadSubject({
    kind: NETWORK_POLICY_KIND,
    namespace: input.namespace,
    name: input.name,
  });
  const kept = changes.slice(0, MAX_RECORDED_CHANGES);
  return {
    eventType: NETWORK_POLICY_CHANGED,
    summary: listSummary(subject, changes.map(describePolicyChange)),
    details: {
      cluster_id: input.clusterId,
      cluster: input.clusterName,
      kind: NETWORK_POLICY_KIND,
      namespace: input.namespace,
      name: input.name,
      change_count: changes.length,
      truncated: kept.length < changes.length,
      changes: kept,
    },
  };
}

/** `pod selector app=web → app=api`, `ingress +from …`, `egress -to …`. */
export function describePolicyChange(change: FactChange): string {
  const { field, before, after } = change;
  if (field === 'ingress' || field === 'egress') {
    if (before === null) return `${field} +${after}`;
    if (after === null) return `${field} -${before}`;
  }
  const noun = field === 'pod_selector' ? 'pod selector' : 'policy types';
  return `${noun} ${before ?? 'unset'} → ${after ?? 'unset'}`;
}

function diffRules(
  changes: FactChange[],
  field: 'ingress' | 'egress',
  before: readonly unknown[],
  after: readonly unknown[],
): void {
  const direction = field === 'ingress' ? 'from' : 'to';
  const from = new Set(before.map((rule) => renderRule(rule, direction)));
  const to = new Set(after.map((rule) => renderRule(rule, direction)));
  for (const rule of [...from].sort(compareCodeUnits)) {
    if (!to.has(rule)) changes.push({ field, before: rule, after: null });
  }
  for (const rule of [...to].sort(compareCodeUnits)) {
    if (!from.has(rule)) changes.push({ field, before: null, after: rule });
  }
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/**
 * A label selector in kubectl's spelling, terms sorted: `app=api`,
 * `tier in (a,b)`, `env notin (x)`, `team` (Exists), `!legacy`
 * (DoesNotExist). An empty selector selects everything: `empty`.
 */
export function renderSelector(selector: unknown, empty: string): string {
  const s = asRecord(selector);
  const terms: string[] = [];
  for (const [key, value] of Object.entries(asRecord(s.matchLabels))) {
    terms.push(`${key}=${String(value)}`);
  }
  for (const raw of asArray(s.matchExpressions)) {
    const e = asRecord(raw);
    const key = String(e.key ?? '');
    const values = asArray(e.values).map(String).sort(compareCodeUnits);
    switch (e.operator) {
      case 'In':
        terms.push(`${key} in (${values.join(',')})`);
        break;
      case 'NotIn':
        terms.push(`${key} notin (${values.join(',')})`);
        break;
      case 'Exists':
        terms.push(key);
        break;
      case 'DoesNotExist':
        terms.push(`!${key}`);
        break;
      default:
        terms.push(`${key} ${String(e.operator)} (${values.join(',')})`);
    }
  }
  return terms.length === 0 ? empty : terms.sort(compareCodeUnits).join(',');
}

function renderPeer(raw: unknown): string {
  const peer = asRecord(raw);
  const ipBlock = asRecord(peer.ipBlock);
  if (typeof ipBlock.cidr === 'string') {
    const except = asArray(ipBlock.except).map(String).sort(compareCodeUnits);
    return except.length === 0
      ? `cidr ${ipBlock.cidr}`
      : `cidr ${ipBlock.cidr} except ${except.join(',')}`;
  }
  const parts: string[] = [];
  if (peer.namespaceSelector !== undefined && peer.namespaceSelector !== null) {
    parts.push(`namespaces(${renderSelector(peer.namespaceSelector, 'all')})`);
  }
  if (peer.podSelector !== undefined && peer.podSelector !== null) {
    parts.push(`pods(${renderSelector(peer.podSelector, 'all')})`);
  }
  return parts.length === 0 ? 'anywhere' : parts.join(' ');
}

function renderPort(raw: unknown): string {
  const port = asRecord(raw);
  const protocol = typeof port.protocol === 'string' ? port.protocol : 'TCP';
  if (port.port === undefined || port.port === null) return `${protocol}/all`;
  const end = typeof port.endPort === 'number' ? `-${port.endPort}` : '';
  return `${protocol}/${String(port.port)}${end}`;
}

/** One rule as text, peers and ports each sorted; see the module header. */
export function renderRule(rule: unknown, direction: 'from' | 'to'): string {
  const r = asRecord(rule);
  const peers = [...new Set(asArray(r[direction]).map(renderPeer))].sort(
    compareCodeUnits,
  );
  const ports = [...new Set(asArray(r.ports).map(renderPort))].sort(
    compareCodeUnits,
  );
  const who = peers.length === 0 ? 'anywhere' : peers.join(', ');
  const on = ports.length === 0 ? 'all ports' : ports.join(', ');
  return `${direction} ${who} on ${on}`;
}
