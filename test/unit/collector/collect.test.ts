import { describe, expect, it } from 'vitest';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import {
  type Inventory,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { objectsOf, realFixtureFiles } from '../../helpers/real-fixtures.ts';

const OPTIONS = {
  agentId: '6a1f0c3e-2b7d-4e59-8c1a-3d5e7f9b0a24',
  agentVersion: 'v0.9.0',
  timestamp: '2026-10-01T12:00:00Z',
  clusterName: 'fixtures',
};

/** The message with the normalized type, to read fields without null checks. */
const built = (...args: Parameters<typeof buildInventory>) =>
  buildInventory(...args) as unknown as Inventory;

describe('buildInventory over the captured objects', () => {
  it.each(realFixtureFiles())(
    'turns %s into a message the backend accepts',
    (file) => {
      // Prepare
      const objects = objectsOf(file);

      // Act
      const message = built(objects, OPTIONS);
      const parsed = parseInventory(JSON.parse(JSON.stringify(message)));

      // Assess
      const rows = Object.values(parsed).filter(Array.isArray).flat().length;
      expect(rows).toBeGreaterThan(objects.replicasets ? -1 : 0);
      const text = JSON.stringify(message);
      expect(text).not.toContain('last-applied-configuration');
      expect(text).not.toContain('managedFields');
    },
  );

  it('reads the Deployment: env names without their key selectors, canonical quantities, strategy', () => {
    // Act
    const message = built(
      objectsOf('deployment-icx-db-secretkeyref-gke.json'),
      OPTIONS,
    );

    // Assess
    const workload = message.workloads?.[0];
    expect(workload?.spec_facts).toEqual({
      replicas: 1,
      strategy: {
        type: 'RollingUpdate',
        max_surge: '25%',
        max_unavailable: '25%',
      },
      containers: [
        {
          name: 'icx-db',
          image: 'postgres:9.2-alpine',
          requests: { cpu: '250m', memory: '256Mi' },
          limits: { cpu: '250m', memory: '512Mi' },
          env_names: ['POSTGRES_PASSWORD', 'POSTGRES_USER'],
          env_from: [],
          volume_refs: [],
        },
      ],
      facts_version: 2,
    });
    expect(workload?.containers[0]?.limits).toEqual({
      cpu_millicores: 250,
      memory_bytes: 512 * 1024 * 1024,
    });
    expect(JSON.stringify(message)).not.toMatch(/pg_pwd|pg_user/);
  });

  it('lists a StatefulSet volumeClaimTemplate as pvc-template', () => {
    const message = built(
      objectsOf('statefulset-nginx-sts-gke-volumeclaimtemplates.json'),
      OPTIONS,
    );
    const refs = message.workloads?.[0]?.spec_facts?.containers.flatMap(
      (c) => c.volume_refs,
    );
    expect(refs?.some((r) => r.startsWith('pvc-template:'))).toBe(true);
  });

  it('reports canary and blueGreen Rollouts, and no facts for a workloadRef Rollout', () => {
    const canary = built(objectsOf('rollout-canary-steps-gke.yaml'), OPTIONS)
      .workloads?.[0];
    const blueGreen = built(
      objectsOf('rollout-bluegreen-paused-gke.yaml'),
      OPTIONS,
    ).workloads?.[0];
    const ref = built(
      objectsOf('rollout-workloadref-deployment-healthy.yaml'),
      OPTIONS,
    ).workloads?.[0];
    expect([
      canary?.kind,
      canary?.strategy,
      canary?.spec_facts?.strategy?.type,
    ]).toEqual(['Rollout', 'canary', 'canary']);
    expect(blueGreen?.spec_facts?.strategy?.type).toBe('blueGreen');
    expect(ref?.spec_facts).toBeNull();
  });

  it("reads a blueGreen Rollout's maxUnavailable as written, as a canary's", () => {
    // Prepare
    const objects = objectsOf('rollout-bluegreen-paused-gke.yaml');
    const rollout = objects.rollouts?.[0];
    rollout.spec.strategy.blueGreen.maxUnavailable = '10%';

    // Act
    const facts = built(objects, OPTIONS).workloads?.[0]?.spec_facts;

    // Assess
    expect(facts?.strategy).toEqual({
      type: 'blueGreen',
      max_unavailable: '10%',
    });
  });

  it("sends an Ingress's default backend beside its rule paths; a resource backend with no service", () => {
    // Prepare
    const file = 'ingress-default-backend-pre-shared-cert-e2e.yaml';
    const asCaptured = objectsOf(file);
    const toBucket = objectsOf(file);
    (toBucket.ingresses ?? [])[0].spec.defaultBackend = {
      resource: { apiGroup: 'k8s.example.com', kind: 'Bucket', name: 'b' },
    };
    const without = objectsOf(file);
    delete (without.ingresses ?? [])[0].spec.defaultBackend;

    // Act
    const [ingress] = built(asCaptured, OPTIONS).ingresses ?? [];
    const [bucket] = built(toBucket, OPTIONS).ingresses ?? [];
    const [none] = built(without, OPTIONS).ingresses ?? [];

    // Assess
    expect(ingress?.default_backend).toEqual({
      service: 'echoheaders-https',
      port: 80,
    });
    expect(ingress?.rules).toEqual([
      {
        host: 'test.ingress.com',
        paths: [
          {
            path: '/test',
            path_type: 'ImplementationSpecific',
            service: 'echoheaders-https',
            port: 80,
          },
        ],
      },
    ]);
    expect(bucket?.default_backend).toEqual({ service: null, port: null });
    expect(none?.default_backend).toBeNull();
  });

  it('follows Pod → ReplicaSet → Rollout to the top controller', () => {
    // Prepare
    const pod = objectsOf('pod-pending-imagepullbackoff-gke.yaml');
    const rs = objectsOf('replicaset-rollout-owned-gke.yaml');
    // The captured ReplicaSet is the stable one; the pod belongs to the
    // canary ReplicaSet of the same Rollout, which has the same owner.
    const canary = pod.pods?.[0].metadata.ownerReferences[0].name;
    (rs.replicasets ?? [])[0].metadata.name = canary;

    // Act
    const message = built({ ...pod, ...rs }, OPTIONS);

    // Assess
    expect(message.pods?.[0]).toMatchObject({
      owner_kind: 'ReplicaSet',
      workload_kind: 'Rollout',
    });
  });

  it('reads both event shapes with the last-seen fallback and a count of 1 for one occurrence', () => {
    const modern = built(
      objectsOf('event-events-k8s-io-v1-scheduled-kind.json'),
      OPTIONS,
    ).events?.[0];
    const core =
      built(
        objectsOf('eventlist-corev1-managedfields-init-crashloop.json'),
        OPTIONS,
      ).events ?? [];
    expect(modern?.involved_object?.kind).toBe('Pod');
    expect(modern?.message).toBeTruthy();
    expect(modern?.last_seen).not.toBeNull();
    expect(core.some((e) => e.count === 490)).toBe(true);
    expect(core.every((e) => (e.count ?? 0) >= 1)).toBe(true);
  });
});

// ------------------------------------------------------------ generated

function pod(
  namespace: string,
  name: string,
  phase: string,
  restarts = 0,
): K8sObject {
  return {
    metadata: { namespace, name, uid: `${namespace}-${name}` },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'i' }] },
    status: {
      phase,
      containerStatuses: [
        { name: 'c', restartCount: restarts, ready: phase === 'Running' },
      ],
    },
  };
}

function event(
  namespace: string,
  name: string,
  times: Record<string, unknown>,
  about = namespace,
): K8sObject {
  return {
    metadata: { namespace, name },
    involvedObject: { kind: 'Pod', name: 'p', namespace: about },
    reason: 'R',
    message: 'm',
    type: 'Normal',
    ...times,
  };
}

describe('collection rules', () => {
  it('excludes namespaces from every namespaced kind before the pod limit spends its budget', () => {
    // Prepare: 5 pods in an excluded namespace, 3 kept, a limit of 3.
    const pods = [
      ...Array.from({ length: 5 }, (_, i) =>
        pod('noisy', `p${i}`, 'Pending', 9),
      ),
      ...Array.from({ length: 3 }, (_, i) => pod('shop', `p${i}`, 'Running')),
    ];
    const objects: ClusterObjects = {
      pods,
      namespaces: [
        { metadata: { name: 'noisy' } },
        { metadata: { name: 'shop' } },
      ],
      services: [{ metadata: { namespace: 'noisy', name: 's' }, spec: {} }],
    };

    // Act
    const message = built(objects, {
      ...OPTIONS,
      excludeNamespaces: ['noisy'],
      podLimit: 3,
    });

    // Assess
    expect(message.pods?.map((p) => `${p.namespace}/${p.name}`)).toEqual([
      'shop/p0',
      'shop/p1',
      'shop/p2',
    ]);
    expect(message.namespaces?.map((n) => n.name)).toEqual(['shop']);
    expect(message.services).toEqual([]);
    expect(message.collection).toEqual({
      excluded_namespaces: ['noisy'],
      pods_truncated: false,
      pods_total: 3,
      events_truncated: false,
    });
  });

  it("drops an event about an excluded namespace's object even when it lives elsewhere", () => {
    const message = built(
      {
        events: [
          event(
            'default',
            'about-noisy',
            { lastTimestamp: '2026-10-01T10:00:00Z' },
            'noisy',
          ),
          event('default', 'kept', { lastTimestamp: '2026-10-01T10:00:00Z' }),
        ],
      },
      { ...OPTIONS, excludeNamespaces: ['noisy'] },
    );
    expect(message.events?.map((e) => e.name)).toEqual(['kept']);
  });

  it('keeps non-Running pods first, then most restarts, at the limit', () => {
    const pods = [
      pod('a', 'running-0', 'Running', 0),
      pod('a', 'running-7', 'Running', 7),
      pod('a', 'failed', 'Failed', 0),
      pod('a', 'pending-2', 'Pending', 2),
      pod('a', 'running-3', 'Running', 3),
    ];
    const message = built({ pods }, { ...OPTIONS, podLimit: 3 });
    expect(message.pods?.map((p) => p.name).sort()).toEqual([
      'failed',
      'pending-2',
      'running-7',
    ]);
    expect(message.collection).toMatchObject({
      pods_truncated: true,
      pods_total: 5,
    });
  });

  it('applies the last-seen fallback chain and keeps the newest events under the cap', () => {
    // Prepare: one event for each step of the chain, oldest to newest.
    const events = [
      event('a', 'first-only', { firstTimestamp: '2026-10-01T10:00:00Z' }),
      event('a', 'event-time', {
        eventTime: '2026-10-01T10:01:00.000000Z',
        firstTimestamp: '2026-10-01T09:00:00Z',
      }),
      event('a', 'series', {
        series: { count: 4, lastObservedTime: '2026-10-01T10:02:00.000000Z' },
        eventTime: '2026-10-01T09:00:00.000000Z',
      }),
      event('a', 'last', {
        lastTimestamp: '2026-10-01T10:03:00Z',
        series: { lastObservedTime: '2026-10-01T09:00:00Z' },
        count: 3,
      }),
    ];

    // Act
    const all = built({ events }, OPTIONS).events ?? [];
    const capped = built({ events }, { ...OPTIONS, eventLimit: 2 });

    // Assess
    const seen = Object.fromEntries(
      all.map((e) => [e.name, [e.last_seen, e.count]]),
    );
    expect(seen).toEqual({
      'first-only': ['2026-10-01T10:00:00Z', 1],
      'event-time': ['2026-10-01T10:01:00.000000Z', 1],
      series: ['2026-10-01T10:02:00.000000Z', 4],
      last: ['2026-10-01T10:03:00Z', 3],
    });
    expect(capped.events?.map((e) => e.name)).toEqual(['last', 'series']);
    expect(capped.collection?.events_truncated).toBe(true);
  });

  it('leaves out a kind it did not list, so the backend does not prune it', () => {
    const message = built({ pods: [] }, OPTIONS);
    expect(message.pods).toEqual([]);
    expect(message.services).toBeUndefined();
    expect(message.workloads).toBeUndefined();
  });

  it('sums pod usage from metrics-server and counts pods per node and namespace', () => {
    const message = built(
      {
        pods: [pod('a', 'p', 'Running')],
        nodes: [
          {
            metadata: { name: 'n1' },
            status: { conditions: [{ type: 'Ready', status: 'True' }] },
          },
        ],
        namespaces: [{ metadata: { name: 'a' } }],
        podMetrics: [
          {
            metadata: { namespace: 'a', name: 'p' },
            containers: [
              { usage: { cpu: '120m', memory: '64Mi' } },
              { usage: { cpu: '5m', memory: '1Mi' } },
            ],
          },
        ],
        nodeMetrics: [
          { metadata: { name: 'n1' }, usage: { cpu: '1500m', memory: '2Gi' } },
        ],
      },
      OPTIONS,
    );
    expect(message.pods?.[0]?.usage).toEqual({
      cpu_millicores: 125,
      memory_bytes: 65 * 1024 * 1024,
    });
    expect(message.nodes?.[0]).toMatchObject({
      pod_count: 1,
      usage: { cpu_millicores: 1500, memory_bytes: 2 * 1024 ** 3 },
    });
    expect(message.namespaces?.[0]).toMatchObject({
      pod_count: 1,
      workload_count: 0,
    });
    expect(message.cluster.status).toBe('healthy');
  });

  it('sends Argo CD applications without values, credentials stripped, and leaves out one it cannot strip', () => {
    const app = (name: string, repoURL: string) => ({
      metadata: { namespace: 'argocd', name, annotations: { note: 'x' } },
      spec: {
        project: 'default',
        destination: {
          server: 'https://kubernetes.default.svc',
          namespace: 'shop',
        },
        source: {
          repoURL,
          path: 'shop',
          targetRevision: 'main',
          helm: {
            values: 'password: planted-helm-value',
            parameters: [{ name: 'p', value: 'planted-param' }],
          },
        },
      },
      status: {
        sync: { status: 'Synced', revision: 'abc' },
        health: { status: 'Healthy' },
        resources: [
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'api' },
        ],
      },
    });
    const message = built(
      {
        argocdApplications: [
          app('ok', 'https://deploy:tok@git.example/shop.git'),
          app('odd', 'https://a@b@c@host/x'),
        ],
      },
      OPTIONS,
    );
    const text = JSON.stringify(message.argocd_applications);
    expect(message.argocd_applications?.map((a) => a.source.repo_url)).toEqual([
      'https://git.example/shop.git',
      'https://host/x',
    ]);
    expect(text).not.toMatch(/planted|tok@|annotations/);
    expect(() =>
      parseInventory(JSON.parse(JSON.stringify(message))),
    ).not.toThrow();
  });

  it('builds the same bytes from the same objects', () => {
    const objects = objectsOf(
      'podlist-kind-v1-36-kube-system-raw-apiserver.json',
    );
    expect(JSON.stringify(built(objects, OPTIONS))).toBe(
      JSON.stringify(built(objects, OPTIONS)),
    );
  });
});
