/**
 * Namespace exclusion on every namespaced kind (spec "Collection Limits and
 * Filtering"): pods, workloads, services, ingresses, PVCs, events, jobs and
 * CronJobs, HPAs, network policies, resource quotas and endpoint slices.
 * Every captured object of the fixture set is placed in a kept namespace
 * and, a second time, in an excluded one; the message holds the kept copy of
 * each kind and nothing of the excluded namespace.
 */
import { describe, expect, it } from 'vitest';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { objectsOf, realFixtureFiles } from '../../helpers/real-fixtures.ts';

const OPTIONS = {
  agentId: '6a1f0c3e-2b7d-4e59-8c1a-3d5e7f9b0a24',
  agentVersion: 'v0.9.0',
  timestamp: '2026-10-01T12:00:00Z',
  clusterName: 'fixtures',
};

/** The spec's namespaced kinds, as the message's arrays name them. */
const NAMESPACED = {
  pods: 'pods',
  workloads: 'workloads',
  services: 'services',
  ingresses: 'ingresses',
  PVCs: 'pvcs',
  events: 'events',
  jobs: 'jobs',
  CronJobs: 'jobs',
  HPAs: 'hpas',
  'network policies': 'network_policies',
  'resource quotas': 'resource_quotas',
  'endpoint slices': 'endpoint_slices',
} as const satisfies Record<string, keyof Inventory>;

const CLUSTER_SCOPED: readonly (keyof ClusterObjects)[] = [
  'version',
  'nodes',
  'namespaces',
  'nodeMetrics',
];

/** `object` moved to `namespace`, an event's object with it. */
function inNamespace(object: K8sObject, namespace: string): K8sObject {
  const copy = structuredClone(object) as K8sObject & {
    involvedObject?: { namespace?: string };
    regarding?: { namespace?: string };
  };
  copy.metadata = { ...copy.metadata, namespace };
  if (copy.involvedObject) copy.involvedObject.namespace = namespace;
  if (copy.regarding) copy.regarding.namespace = namespace;
  return copy;
}

/** The kinds the captured set holds none of, as an apiserver serves them. */
const HAND_MADE: ClusterObjects = {
  ingresses: [
    {
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: { name: 'web', uid: 'ing-1' },
      spec: {
        ingressClassName: 'nginx',
        rules: [
          {
            host: 'shop.example.com',
            http: {
              paths: [
                {
                  path: '/',
                  pathType: 'Prefix',
                  backend: { service: { name: 'web', port: { number: 80 } } },
                },
              ],
            },
          },
        ],
      },
    },
  ],
  resourceQuotas: [
    {
      apiVersion: 'v1',
      kind: 'ResourceQuota',
      metadata: { name: 'compute', uid: 'rq-1' },
      spec: { hard: { 'requests.cpu': '4', pods: '20' } },
      status: {
        hard: { 'requests.cpu': '4', pods: '20' },
        used: { 'requests.cpu': '1500m', pods: '7' },
      },
    },
  ],
};

/** Every fixture object, each in `shop` and again in `noisy`. */
function everyKindTwice(): ClusterObjects {
  const merged: Record<string, K8sObject[]> = {};
  const sources = [...realFixtureFiles().map(objectsOf), HAND_MADE];
  for (const objects of sources) {
    for (const [field, value] of Object.entries(objects)) {
      if (!Array.isArray(value) || CLUSTER_SCOPED.includes(field as never)) {
        continue;
      }
      merged[field] = [
        ...(merged[field] ?? []),
        ...value.flatMap((o: K8sObject) => [
          inNamespace(o, 'shop'),
          inNamespace(o, 'noisy'),
        ]),
      ];
    }
  }
  return {
    ...merged,
    namespaces: [
      { metadata: { name: 'shop' } },
      { metadata: { name: 'noisy' } },
    ],
  } as ClusterObjects;
}

describe('namespace exclusion', () => {
  const objects = everyKindTwice();
  const message = buildInventory(objects, {
    ...OPTIONS,
    excludeNamespaces: ['noisy'],
  }) as unknown as Inventory;
  const unfiltered = buildInventory(objects, OPTIONS) as unknown as Inventory;

  it.each(Object.entries(NAMESPACED))(
    'keeps %s of a kept namespace and none of an excluded one',
    (_kind, field) => {
      // Assess: the kind is there (so the check means something) …
      const rows = (message[field] ?? []) as { namespace: string }[];
      const all = (unfiltered[field] ?? []) as { namespace: string }[];
      expect(all.some((row) => row.namespace === 'noisy')).toBe(true);
      expect(rows.some((row) => row.namespace === 'shop')).toBe(true);
      // … and nothing of the excluded namespace is.
      expect(rows.filter((row) => row.namespace === 'noisy')).toEqual([]);
      expect(rows).toHaveLength(all.length / 2);
    },
  );

  it('keeps CronJobs apart from Jobs, so both are covered', () => {
    const jobs = (message.jobs ?? []) as { kind?: string }[];
    expect(new Set(jobs.map((job) => job.kind))).toEqual(
      new Set(['Job', 'CronJob']),
    );
  });

  it('drops the excluded namespace row and records the exclusion', () => {
    expect(message.namespaces?.map((n) => n.name)).toEqual(['shop']);
    expect(message.collection?.excluded_namespaces).toEqual(['noisy']);
  });
});

describe("namespace exclusion and a node's facts", () => {
  it('counts every pod scheduled on a node, an excluded namespace included', () => {
    // Prepare: five pods on one node, two of them in an excluded namespace.
    const pod = (namespace: string, name: string): K8sObject => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, namespace, uid: `${namespace}-${name}` },
      spec: { nodeName: 'n1', containers: [{ name: 'app', image: 'app:1' }] },
      status: { phase: 'Running' },
    });
    const objects: ClusterObjects = {
      nodes: [{ apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1' } }],
      namespaces: [
        { metadata: { name: 'shop' } },
        { metadata: { name: 'kube-system' } },
      ],
      pods: [
        pod('shop', 'a'),
        pod('shop', 'b'),
        pod('shop', 'c'),
        pod('kube-system', 'dns'),
        pod('kube-system', 'proxy'),
      ],
    };

    // Act
    const message = buildInventory(objects, {
      ...OPTIONS,
      excludeNamespaces: ['kube-system'],
    }) as unknown as Inventory;

    // Assess: the node is cluster-scoped and unaffected; the pods are not.
    expect(message.nodes?.map((n) => [n.name, n.pod_count])).toEqual([
      ['n1', 5],
    ]);
    expect(message.pods?.map((p) => p.name)).toEqual(['a', 'b', 'c']);
  });
});
