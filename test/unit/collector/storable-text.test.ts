/**
 * The collector sends only text the backend can store (shared/collector
 * k8s.ts, storableText and cut): the backend refuses a whole inventory over
 * one NUL or lone surrogate (shared/wire/storable-text.ts), so an Event a
 * kubelet wrote with a NUL must not cost the cluster its inventory.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import {
  cut,
  type K8sObject,
  storableText,
} from '../../../shared/collector/k8s.ts';
import { eventRow } from '../../../shared/collector/rows.ts';
import { LIMITS, parseInventoryJson } from '../../../shared/wire/inventory.ts';
import { unstorableText } from '../../../shared/wire/storable-text.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';

const OPTIONS = {
  agentId: '6a1f0c3e-2b7d-4e59-8c1a-3d5e7f9b0a24',
  agentVersion: 'v0.9.0',
  timestamp: '2026-10-01T12:00:00Z',
  clusterName: 'fixtures',
};

/** What an exec probe printing /proc/<pid>/cmdline leaves in its Event. */
const CMDLINE_MESSAGE =
  'Liveness probe failed: 1\u0000/usr/bin/app\u0000--serve\u0000';
const EMOJI = '\u{1F600}';

/** Over 32 KiB, with an emoji whose two halves straddle the cut. */
const straddling = () =>
  `${'x'.repeat(LIMITS.message - 1)}${EMOJI}${'y'.repeat(31)}`;

/** Any UTF-16 code unit: NULs and lone surrogates of either half included. */
const codeUnit = fc
  .integer({ min: 0, max: 0xffff })
  .map((c) => String.fromCharCode(c));
/** Strings of full Unicode, of raw code units, and of the hard cases mixed. */
const anyText = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: codeUnit }),
  fc
    .array(
      fc.oneof(
        fc.constantFrom(
          '\u0000',
          '\uD800',
          '\uDBFF',
          '\uDC00',
          '\uDFFF',
          EMOJI,
        ),
        fc.string({ unit: 'binary', maxLength: 4 }),
      ),
      { maxLength: 16 },
    )
    .map((pieces) => pieces.join('')),
);

describe('storableText', () => {
  it('turns each NUL into a space, as ps shows a command line', () => {
    expect(storableText(CMDLINE_MESSAGE)).toBe(
      'Liveness probe failed: 1 /usr/bin/app --serve ',
    );
  });

  it('replaces a lone high or low surrogate with U+FFFD and keeps pairs', () => {
    expect(storableText('a\uD83Db')).toBe('a\uFFFDb');
    expect(storableText('a\uDE00b')).toBe('a\uFFFDb');
    expect(storableText('end\uD83D')).toBe('end\uFFFD');
    expect(storableText('\uDE00\uD83D')).toBe('\uFFFD\uFFFD');
    expect(storableText(`a${EMOJI}\uD83D`)).toBe(`a${EMOJI}\uFFFD`);
  });

  it('returns text that is already storable as it is', () => {
    for (const text of [
      '',
      'Back-off restarting failed container',
      `café ${EMOJI} 中文 \uFFFD \u0001\t\n`,
    ]) {
      expect(storableText(text)).toBe(text);
    }
  });

  it('always makes text the backend stores, of the same length', () => {
    fc.assert(
      fc.property(anyText, (text) => {
        const out = storableText(text);
        expect(unstorableText(out)).toBeUndefined();
        expect(out.length).toBe(text.length);
        if (unstorableText(text) === undefined) expect(out).toBe(text);
      }),
      { numRuns: 5000 },
    );
  });
});

describe('cut', () => {
  it('leaves out whole a surrogate pair the limit would split', () => {
    const out = cut(straddling(), LIMITS.message);
    expect(out).toBe('x'.repeat(LIMITS.message - 1));
    expect(unstorableText(out)).toBeUndefined();
  });

  it('keeps a pair that ends at the limit, and counts the limit in UTF-16 code units', () => {
    expect(cut(`ab${EMOJI}c`, 4)).toBe(`ab${EMOJI}`);
    expect(cut(`ab${EMOJI}c`, 3)).toBe('ab');
    expect(cut('abcdef', 4)).toBe('abcd');
    expect(cut('abc', 4)).toBe('abc');
    expect(cut(null, 4)).toBeNull();
  });

  it('makes text the backend stores, storableText cut at a code point, within the limit', () => {
    fc.assert(
      fc.property(anyText, fc.nat({ max: 40 }), (text, max) => {
        const out = cut(text, max)!;
        const whole = storableText(text);
        expect(unstorableText(out)).toBeUndefined();
        expect(out.length).toBeLessThanOrEqual(max);
        expect(whole.startsWith(out)).toBe(true);
        expect(out.length).toBeGreaterThanOrEqual(
          Math.min(whole.length, max - 1),
        );
      }),
      { numRuns: 5000 },
    );
  });
});

/** Every string value of the objects, with a NUL and a lone surrogate. */
function poisoned<T>(value: T): T {
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return `${v}\u0000\uD800`;
    if (Array.isArray(v)) return v.map(walk);
    if (typeof v === 'object' && v !== null) {
      return Object.fromEntries(
        Object.entries(v).map(([k, x]) => [k, walk(x)]),
      );
    }
    return v;
  };
  return walk(value) as T;
}

/** The message's fields holding unstorable text, arrays as `[]`, maps as `*`. */
function unstorableFields(message: unknown): string[] {
  const found = new Set<string>();
  const MAPS = new Set(['labels', 'selector', 'matchLabels']);
  const walk = (v: unknown, path: string) => {
    if (typeof v === 'string') {
      if (unstorableText(v) !== undefined) found.add(path);
    } else if (Array.isArray(v)) {
      for (const x of v) walk(x, `${path}[]`);
    } else if (typeof v === 'object' && v !== null) {
      const map = MAPS.has(path.split('.').pop() ?? '');
      for (const [k, x] of Object.entries(v)) {
        walk(x, map ? `${path}.*` : path ? `${path}.${k}` : k);
      }
    }
  };
  walk(message, '');
  return [...found].sort();
}

/**
 * The fields the collector sends as read, trusting Kubernetes' validation:
 * names, namespaces, uids, labels and selectors, times (Go's formatting),
 * IPs, hostnames, CIDRs, and the enums the apiserver checks (protocols,
 * service types, path types, access modes, strategies). A free-text field
 * that reached the message unstorable would be missing here.
 */
const VALIDATED = new Set([
  'cluster.cloud_region',
  ...[
    'endpoint_slices',
    'events',
    'hpas',
    'ingresses',
    'jobs',
    'namespaces',
    'network_policies',
    'nodes',
    'pods',
    'pvcs',
    'services',
    'workloads',
    'argocd_applications',
  ].flatMap((kind) => [
    `${kind}[].name`,
    `${kind}[].namespace`,
    `${kind}[].uid`,
    `${kind}[].labels.*`,
    `${kind}[].created_at`,
  ]),
  'hpas[].conditions[].last_transition_time',
  'nodes[].conditions[].last_transition_time',
  'workloads[].conditions[].last_transition_time',
  'endpoint_slices[].address_type',
  'endpoint_slices[].endpoints[].addresses[]',
  'endpoint_slices[].endpoints[].node_name',
  'endpoint_slices[].ports[].name',
  'endpoint_slices[].ports[].protocol',
  'endpoint_slices[].service_name',
  'events[].first_seen',
  'events[].last_seen',
  'hpas[].metrics[].type',
  'ingresses[].default_backend.service',
  'ingresses[].load_balancer[]',
  'ingresses[].rules[].host',
  'ingresses[].rules[].paths[].path_type',
  'ingresses[].rules[].paths[].service',
  'ingresses[].tls[].hosts[]',
  'jobs[].completion_time',
  'jobs[].containers[].name',
  'jobs[].last_schedule_time',
  'jobs[].start_time',
  'network_policies[].egress[].ports[].protocol',
  'network_policies[].egress[].to[].ipBlock.cidr',
  'network_policies[].ingress[].from[].ipBlock.cidr',
  'network_policies[].ingress[].from[].ipBlock.except[]',
  'network_policies[].ingress[].from[].namespaceSelector.matchLabels.*',
  'network_policies[].ingress[].from[].podSelector.matchLabels.*',
  'network_policies[].ingress[].ports[].protocol',
  'network_policies[].pod_selector.matchLabels.*',
  'network_policies[].policy_types[]',
  'nodes[].instance_type',
  'nodes[].zone',
  'nodes[].taints[].key',
  'nodes[].taints[].value',
  'nodes[].taints[].effect',
  'pods[].containers[].name',
  'pods[].host_ip',
  'pods[].node_name',
  'pods[].pod_ip',
  'pods[].started_at',
  'pods[].pending_since',
  'pvcs[].access_modes[]',
  'pvcs[].storage_class',
  'pvcs[].volume_mode',
  'services[].cluster_ip',
  'services[].cluster_ips[]',
  'services[].external_ips[]',
  'services[].load_balancer_ingress[]',
  'services[].ports[].name',
  'services[].ports[].protocol',
  'services[].selector.*',
  'services[].type',
  'workloads[].strategy',
  'workloads[].helm_chart',
  'workloads[].helm_chart_version',
  'workloads[].spec_facts.strategy.type',
]);

/** Objects with the free-text fields the captured fixtures lack. */
const EXTRAS: ClusterObjects = {
  argocdApplications: [
    {
      metadata: { name: 'shop', namespace: 'argocd', uid: 'u1' },
      spec: {
        project: 'default',
        source: {
          repoURL: 'https://example.com/shop.git',
          path: 'deploy',
          chart: 'shop',
          targetRevision: 'main',
        },
        destination: { server: 'https://k', name: 'in', namespace: 'shop' },
      },
      status: {
        sync: { status: 'Synced', revision: 'abc' },
        health: { status: 'Healthy' },
        operationState: {
          phase: 'Succeeded',
          operation: { initiatedBy: { username: 'alice' } },
        },
        resources: [
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'x' },
        ],
      },
    },
  ],
  ingresses: [
    {
      metadata: {
        name: 'web',
        namespace: 'shop',
        annotations: { 'kubernetes.io/ingress.class': 'nginx' },
      },
      spec: {
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                {
                  path: '/api',
                  pathType: 'ImplementationSpecific',
                  backend: { service: { name: 'api', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
        tls: [{ hosts: ['shop.example.com'], secretName: 'shop-tls' }],
      },
    },
  ],
  hpas: [
    {
      metadata: { name: 'api', namespace: 'shop' },
      spec: {
        scaleTargetRef: {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          name: 'x',
        },
        metrics: [
          {
            type: 'External',
            external: {
              metric: { name: 'queue_depth' },
              target: { type: 'Value', value: '30' },
            },
          },
        ],
      },
      status: {
        conditions: [
          { type: 'AbleToScale', status: 'True', reason: 'R', message: 'm' },
        ],
      },
    },
  ],
  endpointSlices: [
    {
      metadata: { name: 'api-x', namespace: 'shop' },
      addressType: 'IPv4',
      endpoints: [
        { addresses: ['10.0.0.1'], targetRef: { kind: 'Pod', name: 'api-1' } },
      ],
    },
  ],
  events: [
    {
      metadata: { name: 'e.1', namespace: 'shop' },
      type: 'Warning',
      reason: 'Unhealthy',
      message: CMDLINE_MESSAGE,
      involvedObject: { kind: 'Pod', name: 'api-1', namespace: 'shop' },
      source: { component: 'kubelet' },
      reportingComponent: 'kubelet',
    },
  ],
};

describe('the collector over a cluster whose every string holds a NUL and a lone surrogate', () => {
  it('sends unstorable text only where Kubernetes validation rules it out', () => {
    // Prepare
    const fixtures = allRealObjects();
    const objects = poisoned({
      ...fixtures,
      ...Object.fromEntries(
        Object.entries(EXTRAS).map(([k, list]) => [
          k,
          [
            ...((fixtures[k as keyof ClusterObjects] ?? []) as K8sObject[]),
            ...list,
          ],
        ]),
      ),
    } as ClusterObjects);

    // Act
    const message = buildInventory(objects, OPTIONS);

    // Assess
    const unstorable = unstorableFields(message);
    expect(unstorable.filter((f) => !VALIDATED.has(f))).toEqual([]);
    // The free text was there to scrub: the extras reached the message.
    expect(message.argocd_applications).toHaveLength(1);
    expect(
      message.events?.some((e) => e.message?.includes('1 /usr/bin/app')),
    ).toBe(true);
  });
});

describe('a cluster with an Event and a condition the backend could not store before', () => {
  it('is sent as a message the backend accepts, the text scrubbed', () => {
    // Prepare
    const objects = allRealObjects();
    const [event] = (objects.events ?? []) as K8sObject[];
    const [node, ...nodes] = (objects.nodes ?? []) as K8sObject[];
    const hostile: ClusterObjects = {
      ...objects,
      events: [
        ...(objects.events ?? []),
        {
          ...event,
          metadata: { ...event?.metadata, name: 'cmdline.1', uid: 'c-1' },
          message: CMDLINE_MESSAGE,
          note: CMDLINE_MESSAGE,
        },
        {
          ...event,
          metadata: { ...event?.metadata, name: 'long.1', uid: 'l-1' },
          message: straddling(),
          note: straddling(),
        },
      ],
      nodes: [
        {
          ...node,
          status: {
            ...node?.status,
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady\u0000',
                message: straddling(),
              },
            ],
          },
        },
        ...nodes,
      ],
    };

    // Act
    const message = buildInventory(hostile, OPTIONS);
    const parsed = parseInventoryJson(JSON.stringify(message));

    // Assess
    const byName = (name: string) =>
      parsed.events?.find((e) => e.name === name)?.message;
    expect(byName('cmdline.1')).toBe(
      'Liveness probe failed: 1 /usr/bin/app --serve ',
    );
    expect(byName('long.1')).toBe('x'.repeat(LIMITS.message - 1));
    expect(parsed.nodes?.[0]?.conditions[0]).toMatchObject({
      reason: 'KubeletReady ',
      message: 'x'.repeat(LIMITS.message - 1),
    });
  });

  it('builds an event row of either shape with its text storable', () => {
    const core = eventRow({
      metadata: { name: 'a', namespace: 'shop' },
      message: CMDLINE_MESSAGE,
    });
    const modern = eventRow({
      metadata: { name: 'b', namespace: 'shop' },
      note: straddling(),
      regarding: { kind: 'Pod', name: 'p\u0000' },
    });
    expect(core.message).toBe(storableText(CMDLINE_MESSAGE));
    expect(modern.message).toHaveLength(LIMITS.message - 1);
    expect(modern.involved_object?.name).toBe('p ');
    expect(unstorableText([core, modern])).toBeUndefined();
  });

  it('hides a secret an exec probe printed between NUL-separated arguments', () => {
    // /proc/<pid>/cmdline of `mysql --password hunter2xyz`: with the NULs
    // kept (or made U+FFFD) the sanitizer sees one word and hides nothing.
    const row = eventRow({
      metadata: { name: 'a', namespace: 'shop' },
      message: 'Liveness probe failed: mysql\u0000--password\u0000hunter2xyz',
    });
    expect(row.message).toBe(
      'Liveness probe failed: mysql --password [REDACTED]',
    );
  });
});
