import { describe, expect, it } from 'vitest';
import {
  buildNetworkPolicyChange,
  diffNetworkPolicy,
  type NetworkPolicyFacts,
  renderRule,
  renderSelector,
} from '../../../shared/changes/network-policy.ts';

const base: NetworkPolicyFacts = {
  pod_selector: { matchLabels: { app: 'api' } },
  policy_types: ['Ingress'],
  ingress: [
    {
      from: [{ podSelector: { matchLabels: { app: 'web' } } }],
      ports: [{ protocol: 'TCP', port: 8080 }],
    },
  ],
  egress: [],
};

const input = (after: NetworkPolicyFacts) => ({
  clusterId: '00000000-0000-4000-8000-000000000001',
  clusterName: 'k8s-prod-01',
  namespace: 'shop',
  name: 'allow-web',
  before: base,
  after,
});

describe('NetworkPolicy change records', () => {
  it('renders a selector in kubectl spelling, terms sorted, an empty one as its fallback', () => {
    // Prepare
    const selector = {
      matchLabels: { tier: 'web', app: 'api' },
      matchExpressions: [
        { key: 'env', operator: 'In', values: ['prod', 'dev'] },
        { key: 'legacy', operator: 'DoesNotExist' },
        { key: 'team', operator: 'Exists' },
        { key: 'zone', operator: 'NotIn', values: ['b'] },
      ],
    };

    // Act
    const text = renderSelector(selector, 'all pods');

    // Assess
    expect(text).toBe(
      '!legacy,app=api,env in (dev,prod),team,tier=web,zone notin (b)',
    );
    expect(renderSelector({}, 'all pods')).toBe('all pods');
  });

  it('renders a rule with its peers and ports, and an empty side as anywhere or all ports', () => {
    // Act
    const rule = renderRule(
      {
        from: [
          { ipBlock: { cidr: '10.0.0.0/8', except: ['10.1.0.0/16'] } },
          {
            namespaceSelector: { matchLabels: { team: 'a' } },
            podSelector: {},
          },
        ],
        ports: [
          { protocol: 'UDP', port: 53 },
          { port: 8000, endPort: 8080 },
        ],
      },
      'from',
    );

    // Assess
    expect(rule).toBe(
      'from cidr 10.0.0.0/8 except 10.1.0.0/16, namespaces(team=a) pods(all) on TCP/8000-8080, UDP/53',
    );
    expect(renderRule({}, 'to')).toBe('to anywhere on all ports');
  });

  it('finds nothing when only the order of keys, rules or policy types differs', () => {
    // Prepare
    const second = { from: [{ ipBlock: { cidr: '192.168.0.0/16' } }] };
    const before = { ...base, ingress: [...base.ingress, second] };
    const after: NetworkPolicyFacts = {
      pod_selector: { matchLabels: { app: 'api' } },
      policy_types: ['Ingress'],
      ingress: [second, ...base.ingress],
      egress: [],
    };

    // Act
    const changes = diffNetworkPolicy(before, after);

    // Assess
    expect(changes).toEqual([]);
    expect(buildNetworkPolicyChange({ ...input(after), before })).toBe(
      undefined,
    );
  });

  it('records a selector, policy types and rule change as one row in the workload summary style', () => {
    // Prepare
    const after: NetworkPolicyFacts = {
      pod_selector: { matchLabels: { app: 'checkout' } },
      policy_types: ['Ingress', 'Egress'],
      ingress: [
        {
          from: [{ podSelector: { matchLabels: { app: 'web' } } }],
          ports: [{ protocol: 'TCP', port: 9090 }],
        },
      ],
      egress: [{ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }] }],
    };

    // Act
    const record = buildNetworkPolicyChange(input(after));

    // Assess
    expect(record?.eventType).toBe('network_policy_changed');
    expect(record?.summary).toBe(
      'NetworkPolicy shop/allow-web: pod selector app=api → app=checkout; policy types Ingress → Egress,Ingress; +3 more',
    );
    expect(record?.details).toEqual({
      cluster_id: '00000000-0000-4000-8000-000000000001',
      cluster: 'k8s-prod-01',
      kind: 'NetworkPolicy',
      namespace: 'shop',
      name: 'allow-web',
      change_count: 5,
      truncated: false,
      changes: [
        { field: 'pod_selector', before: 'app=api', after: 'app=checkout' },
        { field: 'policy_types', before: 'Ingress', after: 'Egress,Ingress' },
        {
          field: 'ingress',
          before: 'from pods(app=web) on TCP/8080',
          after: null,
        },
        {
          field: 'ingress',
          before: null,
          after: 'from pods(app=web) on TCP/9090',
        },
        {
          field: 'egress',
          before: null,
          after: 'to cidr 0.0.0.0/0 on all ports',
        },
      ],
    });
  });

  it('names a single removed rule in the summary', () => {
    // Act
    const record = buildNetworkPolicyChange(input({ ...base, ingress: [] }));

    // Assess
    expect(record?.summary).toBe(
      'NetworkPolicy shop/allow-web: ingress -from pods(app=web) on TCP/8080',
    );
  });
});
