/**
 * The lister against each cluster shape a real apiserver presents: which
 * optional kinds are listed (from discovery, per resource), which are "not
 * collected" and why, and which failures still fail the cycle. The fake
 * apiserver (test/helpers/fake-kube.ts) answers as kube-apiserver does.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { discoverAbsent } from '../../../shared/agent/discovery.ts';
import { KubeApi } from '../../../shared/agent/kube-api.ts';
import {
  CollectionError,
  collectInventory,
  listCluster,
} from '../../../shared/agent/list.ts';
import type { ApiResource } from '../../../shared/agent/resources.ts';
import {
  type FakeKube,
  type FakeKubeOptions,
  startFakeKube,
} from '../../helpers/fake-kube.ts';

const ARGO = 'argoproj.io/v1alpha1';
const METRICS = 'metrics.k8s.io/v1beta1';

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  uid: `${namespace ?? ''}-${name}-uid`,
  creationTimestamp: '2026-01-01T00:00:00Z',
});
const pod = (name: string) => ({
  metadata: meta(name, 'shop'),
  spec: { nodeName: 'node-1', containers: [{ name: 'c', image: 'x:1' }] },
  status: { phase: 'Running' },
});
const ROLLOUT = {
  apiVersion: ARGO,
  kind: 'Rollout',
  metadata: meta('checkout', 'shop'),
  spec: {
    replicas: 2,
    strategy: { canary: {} },
    template: { spec: { containers: [{ name: 'c', image: 'x:1' }] } },
  },
};
const APPLICATION = {
  apiVersion: ARGO,
  kind: 'Application',
  metadata: meta('shop', 'argocd'),
  spec: {
    project: 'default',
    source: { repoURL: 'https://example.com/shop.git', path: 'deploy' },
    destination: { server: 'https://kubernetes.default.svc' },
  },
  status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
};

let kube: FakeKube | undefined;

afterEach(async () => {
  await kube?.stop();
  kube = undefined;
});

/** A small cluster: the core kinds, plus what `shape` installs. */
async function cluster(
  shape: { rollouts?: boolean; argocd?: boolean; metrics?: boolean } = {},
  options: FakeKubeOptions = {},
): Promise<FakeKube> {
  kube = await startFakeKube(options);
  kube.add('v1', 'nodes', [
    {
      metadata: meta('node-1'),
      status: {
        capacity: { cpu: '4', memory: '8Gi', pods: '110' },
        allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
        conditions: [{ type: 'Ready', status: 'True' }],
      },
    },
  ]);
  kube.add('v1', 'namespaces', [{ metadata: meta('shop') }]);
  kube.add('v1', 'pods', [pod('web-1'), pod('web-2')]);
  kube.add('apps/v1', 'deployments', [
    {
      metadata: meta('web', 'shop'),
      spec: {
        replicas: 2,
        template: { spec: { containers: [{ name: 'c', image: 'x:1' }] } },
      },
    },
  ]);
  if (shape.rollouts) kube.add(ARGO, 'rollouts', [ROLLOUT]);
  if (shape.argocd) kube.add(ARGO, 'applications', [APPLICATION]);
  if (shape.metrics) {
    kube.add(METRICS, 'nodes', [
      {
        metadata: meta('node-1'),
        usage: { cpu: '250m', memory: '1Gi' },
      },
    ]);
    kube.add(METRICS, 'pods', [
      {
        metadata: meta('web-1', 'shop'),
        containers: [{ name: 'c', usage: { cpu: '10m', memory: '64Mi' } }],
      },
    ]);
  }
  return kube;
}

const api = (k: FakeKube) => new KubeApi(k.kubeConfig);

const collect = (k: FakeKube, kubeApi = api(k)) =>
  collectInventory(kubeApi, {
    agentId: '00000000-0000-4000-8000-000000000001',
    agentVersion: 'v0.9.0',
    timestamp: '2026-01-02T00:00:00Z',
    clusterName: 'shape',
    pageSize: 1,
  });

const reasons = (notCollected: { resource: string; reason: string }[]) =>
  Object.fromEntries(notCollected.map((n) => [n.resource, n.reason]));

const requested = (k: FakeKube, path: string) =>
  k.requests.filter((r) => r.split('?')[0] === path).length;

describe('the lister reads what the cluster serves', () => {
  it('lists Rollouts on a cluster with Argo Rollouts and no Argo CD, leaving Applications out', async () => {
    // Prepare
    const k = await cluster({ rollouts: true, metrics: true });

    // Act
    const { message, notCollected } = await collect(k);

    // Assess
    expect(reasons(notCollected)).toEqual({
      'applications.argoproj.io/v1alpha1': 'not_installed',
    });
    expect(notCollected[0]?.detail).toBe(
      'argoproj.io/v1alpha1 does not list applications',
    );
    expect(message.workloads?.map((w) => w.kind).sort()).toEqual([
      'Deployment',
      'Rollout',
    ]);
    expect('argocd_applications' in message).toBe(false);
    expect(message.nodes?.[0]?.usage).toEqual({
      cpu_millicores: 250,
      memory_bytes: 1024 ** 3,
    });
    // Discovery said no: the list the old code failed on is never asked for.
    expect(requested(k, `/apis/${ARGO}/applications`)).toBe(0);
    expect(requested(k, `/apis/${ARGO}`)).toBe(1);
    expect(requested(k, `/apis/${METRICS}`)).toBe(1);
  });

  it('lists Applications on a cluster with Argo CD and no Rollouts; its workloads carry no Rollout', async () => {
    // Prepare
    const k = await cluster({ argocd: true });

    // Act
    const { message, notCollected } = await collect(k);

    // Assess
    expect(reasons(notCollected)).toEqual({
      'rollouts.argoproj.io/v1alpha1': 'not_installed',
      'nodes.metrics.k8s.io/v1beta1': 'not_installed',
      'pods.metrics.k8s.io/v1beta1': 'not_installed',
    });
    expect(message.argocd_applications?.map((a) => a.name)).toEqual(['shop']);
    expect(message.workloads?.map((w) => w.kind)).toEqual(['Deployment']);
    expect(requested(k, `/apis/${ARGO}/rollouts`)).toBe(0);
  });

  it.each([
    ['a NotFound Status', 'status'],
    ['the plain-text 404 of older releases', 'plain'],
  ] as const)(
    'leaves out every optional kind on a cluster with neither, its group answering %s',
    async (_, notFound) => {
      // Prepare
      const k = await cluster({}, { notFound });

      // Act
      const { message, notCollected } = await collect(k);

      // Assess
      expect(reasons(notCollected)).toEqual({
        'rollouts.argoproj.io/v1alpha1': 'not_installed',
        'applications.argoproj.io/v1alpha1': 'not_installed',
        'nodes.metrics.k8s.io/v1beta1': 'not_installed',
        'pods.metrics.k8s.io/v1beta1': 'not_installed',
      });
      expect(notCollected[0]?.detail).toMatch(
        /^discovery \/apis\/argoproj.io\/v1alpha1 answered HTTP 404/,
      );
      expect(message.workloads).toHaveLength(1);
      expect(message.pods).toHaveLength(2);
      expect('argocd_applications' in message).toBe(false);
      expect(message.nodes?.[0]?.usage).toBeNull();
    },
  );

  it.each([
    ["the aggregator's plain-text 503", 'text'],
    ['a ServiceUnavailable Status', 'status'],
  ] as const)(
    'sends the inventory with usage null while metrics-server is down (%s)',
    async (_, body) => {
      // Prepare
      const k = await cluster({ rollouts: true, argocd: true, metrics: true });
      k.unavailable(METRICS, body);

      // Act
      const { message, notCollected } = await collect(k);

      // Assess
      expect(reasons(notCollected)).toEqual({
        'nodes.metrics.k8s.io/v1beta1': 'unavailable',
        'pods.metrics.k8s.io/v1beta1': 'unavailable',
      });
      expect(notCollected[0]?.detail).toContain('HTTP 503');
      expect(notCollected[0]?.detail).toContain('service unavailable');
      expect(message.nodes?.map((n) => n.usage)).toEqual([null]);
      expect(message.pods?.map((p) => p.usage)).toEqual([null, null]);
      expect(message.workloads).toHaveLength(2);
      expect(message.argocd_applications).toHaveLength(1);
    },
  );

  it("sends the inventory with usage null when metrics-server's lists time out at the apiserver (504 Timeout)", async () => {
    // Prepare
    const k = await cluster({ rollouts: true, argocd: true, metrics: true });
    k.fail(METRICS, 'nodes', 504);
    k.fail(METRICS, 'pods', 504);

    // Act
    const { message, notCollected } = await collect(k);

    // Assess
    expect(reasons(notCollected)).toEqual({
      'nodes.metrics.k8s.io/v1beta1': 'unavailable',
      'pods.metrics.k8s.io/v1beta1': 'unavailable',
    });
    expect(notCollected[0]?.detail).toMatch(/^HTTP 504 Timeout/);
    expect(message.nodes?.map((n) => n.usage)).toEqual([null]);
    expect(message.workloads).toHaveLength(2);
  });

  it("sends the inventory with usage null when metrics-server hangs past the agent's own timeout", async () => {
    // Prepare: its discovery and its lists never answer.
    const k = await cluster({ rollouts: true, argocd: true, metrics: true });
    k.hang(METRICS);

    // Act
    const { message, notCollected } = await collect(
      k,
      new KubeApi(k.kubeConfig, { timeoutMs: 300 }),
    );

    // Assess
    expect(reasons(notCollected)).toEqual({
      'nodes.metrics.k8s.io/v1beta1': 'unavailable',
      'pods.metrics.k8s.io/v1beta1': 'unavailable',
    });
    expect(notCollected[0]?.detail).toMatch(/timed out after 300 ms/);
    expect(message.nodes?.map((n) => n.usage)).toEqual([null]);
    expect(message.pods).toHaveLength(2);
  });

  it('leaves usage out when metrics-server goes down between discovery and its list', async () => {
    // Prepare
    const k = await cluster({ metrics: true });
    k.onRequest((path) => {
      if (path.startsWith(`/apis/${METRICS}/`)) k.unavailable(METRICS);
    });

    // Act
    const { message, notCollected } = await collect(k);

    // Assess
    expect(reasons(notCollected)).toMatchObject({
      'nodes.metrics.k8s.io/v1beta1': 'unavailable',
      'pods.metrics.k8s.io/v1beta1': 'unavailable',
    });
    expect(message.nodes?.[0]?.usage).toBeNull();
  });

  it.each([
    ['a NotFound Status', 'status'],
    ['the plain-text 404 of older releases', 'plain'],
  ] as const)(
    'leaves Rollouts out when their CRD is deleted between discovery and the list (%s)',
    async (_, notFound) => {
      // Prepare
      const k = await cluster({ rollouts: true, argocd: true }, { notFound });
      k.onRequest((path) => {
        if (path.startsWith(`/apis/${ARGO}/rollouts`))
          k.uninstall(ARGO, 'rollouts');
      });

      // Act
      const { message, notCollected } = await collect(k);

      // Assess
      expect(reasons(notCollected)).toMatchObject({
        'rollouts.argoproj.io/v1alpha1': 'not_installed',
      });
      expect(notCollected.find((n) => n.field === 'rollouts')?.detail).toMatch(
        /^HTTP 404/,
      );
      expect(message.workloads?.map((w) => w.kind)).toEqual(['Deployment']);
      expect(message.argocd_applications).toHaveLength(1);
    },
  );

  it('leaves one optional kind out when the agent may not list it (403)', async () => {
    // Prepare
    const k = await cluster({ rollouts: true, argocd: true, metrics: true });
    k.forbid('applications');

    // Act
    const { message, notCollected } = await collect(k);

    // Assess
    expect(reasons(notCollected)).toEqual({
      'applications.argoproj.io/v1alpha1': 'forbidden',
    });
    expect(notCollected[0]?.detail).toContain(
      'cannot list resource "applications" in API group "argoproj.io"',
    );
    expect('argocd_applications' in message).toBe(false);
    expect(message.workloads).toHaveLength(2);
    expect(message.nodes?.[0]?.usage).not.toBeNull();
  });

  it('reads each optional group/version discovery once per cycle', async () => {
    // Prepare
    const k = await cluster({ rollouts: true, argocd: true, metrics: true });

    // Act
    await listCluster(api(k));
    await listCluster(api(k));

    // Assess
    expect(requested(k, `/apis/${ARGO}`)).toBe(2);
    expect(requested(k, `/apis/${METRICS}`)).toBe(2);
    expect(requested(k, '/apis/apps/v1')).toBe(0);
  });

  it('decides any later optional kind from its own discovery', async () => {
    // Prepare
    const k = await cluster();
    k.install('example.com/v1', 'widgets');
    const widgets: ApiResource = {
      group: 'example.com',
      version: 'v1',
      resource: 'widgets',
      namespaced: true,
      optional: true,
    };
    const gadgets = { ...widgets, resource: 'gadgets' };
    const other = { ...widgets, group: 'other.example.com' };

    // Act
    const absent = await discoverAbsent(api(k), [widgets, gadgets, other]);

    // Assess
    expect(absent.has(widgets)).toBe(false);
    expect(absent.get(gadgets)?.reason).toBe('not_installed');
    expect(absent.get(other)?.reason).toBe('not_installed');
  });
});

describe('the lister still fails the cycle', () => {
  it.each([
    ['a 500 from a core list', (k: FakeKube) => k.fail('v1', 'pods', 500)],
    [
      'a 504 from a core list',
      (k: FakeKube) => k.fail('apps/v1', 'deployments', 504),
    ],
    ['a 403 on a core kind', (k: FakeKube) => k.forbid('services')],
    [
      'a 500 on an optional list (not a "not here")',
      (k: FakeKube) => k.fail(ARGO, 'rollouts', 500),
    ],
    [
      'a core list the apiserver does not answer in time',
      (k: FakeKube) => k.hang('apps/v1'),
    ],
  ])('on %s', async (_, breakIt) => {
    // Prepare
    const k = await cluster({ rollouts: true });
    breakIt(k);

    // Act
    const listing = listCluster(new KubeApi(k.kubeConfig, { timeoutMs: 300 }));

    // Assess
    await expect(listing).rejects.toThrow(CollectionError);
    await expect(listing).rejects.toThrow(/^listing \S+ failed: /);
  });

  it('when the apiserver does not answer', async () => {
    // Prepare
    const gone = await startFakeKube();
    const config = gone.kubeConfig;
    await gone.stop();

    // Act
    const listing = listCluster(new KubeApi(config));

    // Assess
    await expect(listing).rejects.toThrow(
      /did not answer \/version: .*ECONNREFUSED/,
    );
  });
});
