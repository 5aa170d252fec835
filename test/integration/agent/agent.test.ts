import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_STREAM } from '../../../infra/local/ingest.ts';
import { seedAgentId } from '../../../scripts/seed-agent.ts';
import { Agent, type AgentOptions } from '../../../shared/agent/agent.ts';
import { CollectionError } from '../../../shared/agent/list.ts';
import {
  buildInventory,
  type ClusterObjects,
} from '../../../shared/collector/collect.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import { query } from '../../../shared/db/pool.ts';
import { connectNats } from '../../../shared/ingest/bridge/nats-setup.ts';
import { commandSubject } from '../../../shared/live/kube-query.ts';
import { freePort } from '../../../shared/process/supervise.ts';
import {
  REDACTED,
  sanitizeAnnotationValue,
} from '../../../shared/sanitize/secrets.ts';
import { KIND_ORDER } from '../../../shared/sync/kinds.ts';
import {
  type Inventory,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { agentPod, cannotRunAsPod } from '../../helpers/agent-pod.ts';
import {
  type FakeKube,
  type FakeKubeOptions,
  serveCluster,
  startFakeKube,
} from '../../helpers/fake-kube.ts';
import { countRows } from '../../helpers/inventory-db.ts';
import { startNatsServer } from '../../helpers/nats.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';
import { eventually, startWorld, type World } from '../ingest/support.ts';

const SILENT = { info() {}, warn() {}, error() {} };

let world: World;
let kube: FakeKube;
let dir: string;
let kubeconfigPath: string;

/** The collector's message from the fixtures, built here directly. */
function expectedMessage(
  excludeNamespaces: string[] = [],
  objects: ClusterObjects = allRealObjects(),
): Inventory {
  return parseInventory(
    buildInventory(objects, {
      agentId: randomUUID(),
      agentVersion: 'v0.9.0',
      timestamp: new Date().toISOString(),
      clusterName: 'expected',
      excludeNamespaces,
    }),
  );
}

/** Rows per kind a message carries. */
const kindCounts = (inventory: Inventory) =>
  Object.fromEntries(KIND_ORDER.map((k) => [k, (inventory[k] ?? []).length]));

/**
 * The rows the sync keeps of a message: one per key (some fixtures share a
 * namespace and name; the last wins), and no event, since the captured
 * events are older than the retention window (docs/decisions.md).
 */
function storedCounts(inventory: Inventory) {
  return Object.fromEntries(
    KIND_ORDER.map((k) => {
      const rows = (inventory[k] ?? []) as {
        kind?: string;
        namespace?: string;
        name: string;
      }[];
      const keys = new Set(
        rows.map((r) => `${r.kind ?? ''}/${r.namespace ?? ''}/${r.name}`),
      );
      return [k, k === 'events' ? 0 : keys.size];
    }),
  );
}

/** The last message the stream holds on the agent's subject, decoded. */
async function lastPublished(agentId: string) {
  const jsm = await jetstreamManager(world.publisher);
  const stored = await jsm.streams.getMessage(DEFAULT_STREAM, {
    last_by_subj: world.subjectFor(agentId),
  });
  if (stored === null) throw new Error('nothing published');
  const encoding = stored.header?.get('Content-Encoding') || undefined;
  const body = encoding === 'gzip' ? gunzipSync(stored.data) : stored.data;
  return {
    encoding,
    message: parseInventory(JSON.parse(Buffer.from(body).toString())),
  };
}

function agentOptions(overrides: Partial<AgentOptions> = {}): AgentOptions {
  return {
    kubeConfig: kube.kubeConfig,
    nats: { url: world.nats.url },
    client: world.tenant.clientSlug,
    environment: world.tenant.envSlug,
    agentId: randomUUID(),
    clusterName: 'fixtures',
    intervalMs: 60_000,
    excludeNamespaces: [],
    podLimit: 5000,
    // Small pages, so every list with more than two items is paged.
    pageSize: 2,
    logger: SILENT,
    ...overrides,
  };
}

interface Run {
  code: number;
  stderr: string;
}

/** `npm run agent -- --once` as a process, with only the given variables. */
function runOnceProcess(env: Record<string, string>): Promise<Run> {
  return runScript(['functions/agent/main.ts', '--once'], env);
}

/** A TypeScript entry file as a process, with only the given variables. */
function runScript(args: string[], env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', ...args],
      {
        env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'WARN', ...env },
        timeout: 60_000,
      },
      (error, _stdout, stderr) =>
        resolve({
          code: error ? Number((error as { code?: number }).code ?? 1) : 0,
          stderr,
        }),
    );
  });
}

/** The fake's context as a kubeconfig file (JSON is YAML). */
async function kubeconfigOf(fake: FakeKube, name: string): Promise<string> {
  const path = join(dir, `kubeconfig-${name}`);
  await writeFile(path, fake.kubeConfig.exportConfig());
  return path;
}

/** A fake apiserver of its own serving the objects, and its kubeconfig file. */
async function clusterServing(
  name: string,
  objects: ClusterObjects,
  options: FakeKubeOptions = {},
): Promise<{ fake: FakeKube; kubeconfig: string }> {
  const fake = await startFakeKube(options);
  serveCluster(fake, objects);
  return { fake, kubeconfig: await kubeconfigOf(fake, name) };
}

/** `--once` as a user runs it, against the given kubeconfig. */
function runOnceAgainst(kubeconfig: string, agentId: string) {
  return runOnceProcess({
    KUBECONFIG: kubeconfig,
    NATS_URL: world.nats.url,
    PROXIMA_CLIENT: world.tenant.clientSlug,
    PROXIMA_ENVIRONMENT: world.tenant.envSlug,
    PROXIMA_AGENT_ID: agentId,
  });
}

/** The agent's last message, once the sync has stored exactly its rows. */
async function publishedAndStored(agentId: string): Promise<Inventory> {
  const cluster = await eventually('the cluster row', () =>
    world.clusterOf(agentId),
  );
  const { message } = await lastPublished(agentId);
  expect(await countRows(world.database.db, cluster.id)).toEqual(
    storedCounts(message),
  );
  return message;
}

/** Whether the stream holds anything on the agent's subject. */
async function publishedAnything(agentId: string): Promise<boolean> {
  return lastPublished(agentId).then(
    () => true,
    () => false,
  );
}

/** The agent's WARN-and-above log lines (stderr, JSON) that say a kind was left out. */
const notCollectedLines = (stderr: string) =>
  stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l))
    .filter((l) => String(l.message).startsWith('kind not collected'));

const ARGO_CD_APPLICATION = {
  apiVersion: 'argoproj.io/v1alpha1',
  kind: 'Application',
  metadata: {
    name: 'shop',
    namespace: 'argocd',
    uid: '7d0c3f3e-3c55-4a8e-9f57-0d7c2f1a1b11',
    creationTimestamp: '2026-01-01T00:00:00Z',
  },
  spec: {
    project: 'default',
    source: { repoURL: 'https://example.com/shop.git', path: 'deploy' },
    destination: { server: 'https://kubernetes.default.svc' },
  },
  status: { sync: { status: 'Synced' }, health: { status: 'Healthy' } },
};

beforeAll(async () => {
  world = await startWorld();
  kube = await startFakeKube();
  serveCluster(kube, allRealObjects());
  dir = await mkdtemp(join(tmpdir(), 'agent-test-'));
  kubeconfigPath = join(dir, 'kubeconfig');
  // JSON is YAML: the fake's context as a kubeconfig file.
  await writeFile(kubeconfigPath, kube.kubeConfig.exportConfig());
}, 120_000);

afterAll(async () => {
  await kube?.stop();
  await world?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the cluster agent', () => {
  it('stops, its connection closed, when its NATS server is already gone (a pod stopped during a NATS outage)', async () => {
    // Prepare
    const server = await startNatsServer();
    const agent = new Agent(agentOptions({ nats: { url: server.url } }));
    const nc = await agent.connect();
    await server.stop();

    // Act
    await agent.stop();

    // Assess
    expect(nc.isClosed()).toBe(true);
  });

  it('lists the fixtures in pages, publishes them, and the sync stores every row', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const options = agentOptions({ healthPort: 0 });
    const agent = new Agent(options);

    // Act
    await agent.start();
    const cluster = await eventually('the cluster row', () =>
      world.clusterOf(options.agentId),
    );
    const port = agent.healthAddress()?.port;
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    const scrape = await (
      await fetch(`http://127.0.0.1:${port}/metrics`)
    ).text();
    const manifest = JSON.parse(
      (
        await agent.connection!.request(
          commandSubject(options.agentId),
          JSON.stringify({
            type: 'kube_query',
            version: 1,
            request_id: randomUUID(),
            actor: 'alice@example.com',
            query: 'manifest',
            kind: 'Deployment',
            namespace: 'icx',
            name: 'icx-db',
          }),
          { timeout: 15_000 },
        )
      ).string(),
    );
    await agent.stop();

    // Assess
    const { encoding, message } = await lastPublished(options.agentId);
    expect(encoding).toBe('gzip');
    expect(kindCounts(message)).toEqual(kindCounts(expectedMessage()));
    expect(message.events?.length).toBeGreaterThan(0);
    expect(message.agent_version).toBe('v0.9.0');
    expect(cluster.name).toBe('fixtures');
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      storedCounts(message),
    );
    const [stored] = await query<{ agent_version: string }>(
      world.database.db,
      'select agent_version from clusters where id = $1',
      [cluster.id],
    );
    expect(stored?.agent_version).toBe('v0.9.0');
    expect(
      kube.requests.some((r) => /^\/api\/v1\/pods\?.*continue=\d+/.test(r)),
    ).toBe(true);
    expect(health.status).toBe(200);
    expect(scrape).toMatch(
      /proxima_collector_inventory_payload_bytes [1-9]\d*/,
    );
    expect(scrape).toContain('proxima_collector_inventories_published_total 1');
    // The fixtures' cluster runs Argo Rollouts, not Argo CD nor metrics-server.
    expect(message.workloads?.some((w) => w.kind === 'Rollout')).toBe(true);
    expect(message.argocd_applications).toBeUndefined();
    expect(scrape).toContain(
      'proxima_collector_kinds_not_collected_total{kind="applications.argoproj.io/v1alpha1",reason="not_installed"} 1',
    );
    expect(scrape).toContain(
      'proxima_collector_kinds_not_collected_total{kind="nodes.metrics.k8s.io/v1beta1",reason="not_installed"} 1',
    );
    expect(scrape).not.toContain(
      'proxima_collector_kinds_not_collected_total{kind="rollouts',
    );
    expect(manifest.ok).toBe(true);
    expect(manifest.result.name).toBe('icx-db');
    expect(agent.connection?.isClosed()).toBe(true);
    await expect(fetch(`http://127.0.0.1:${port}/healthz`)).rejects.toThrow();
  });

  it('leaves an optional kind it may not list out of the message, so its rows are not pruned', {
    timeout: 60_000,
  }, async () => {
    // Prepare
    const forbidding = await startFakeKube();
    serveCluster(forbidding, {
      ...allRealObjects(),
      argocdApplications: [ARGO_CD_APPLICATION],
    });
    forbidding.forbid('applications');
    const options = agentOptions({ kubeConfig: forbidding.kubeConfig });
    const agent = new Agent(options);

    // Act
    const result = await agent.syncOnce().finally(async () => {
      await agent.stop();
      await forbidding.stop();
    });
    const scrape = await agent.metrics.registry.metrics();

    // Assess
    expect(result.publish.published).toBe(true);
    expect(result.notCollected).toEqual([
      expect.objectContaining({
        resource: 'applications.argoproj.io/v1alpha1',
        reason: 'forbidden',
      }),
      expect.objectContaining({
        resource: 'nodes.metrics.k8s.io/v1beta1',
        reason: 'not_installed',
      }),
      expect.objectContaining({
        resource: 'pods.metrics.k8s.io/v1beta1',
        reason: 'not_installed',
      }),
    ]);
    expect(scrape).toContain(
      'proxima_collector_kinds_not_collected_total{kind="applications.argoproj.io/v1alpha1",reason="forbidden"} 1',
    );
    const { message } = await lastPublished(options.agentId);
    expect(message.argocd_applications).toBeUndefined();
    expect(kindCounts(message)).toEqual(kindCounts(expectedMessage()));
  });

  it('publishes nothing when a core kind is refused: its rows would be pruned', {
    timeout: 60_000,
  }, async () => {
    // Prepare
    const forbidding = await startFakeKube();
    serveCluster(forbidding, allRealObjects());
    forbidding.forbid('services');
    const options = agentOptions({ kubeConfig: forbidding.kubeConfig });
    const agent = new Agent(options);

    // Act
    const sync = agent.syncOnce();
    await sync.catch(() => undefined);
    await agent.stop();
    await forbidding.stop();

    // Assess
    await expect(sync).rejects.toThrow(CollectionError);
    await expect(sync).rejects.toThrow(
      /^listing services\.v1 failed: services is forbidden/,
    );
    expect(await publishedAnything(options.agentId)).toBe(false);
  });

  it('--once publishes one inventory, without the excluded namespaces, and exits 0 once acked', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();

    // Act
    const run = await runOnceProcess({
      KUBECONFIG: kubeconfigPath,
      NATS_URL: world.nats.url,
      PROXIMA_CLIENT: world.tenant.clientSlug,
      PROXIMA_ENVIRONMENT: world.tenant.envSlug,
      PROXIMA_AGENT_ID: agentId,
      PROXIMA_CLUSTER_NAME: 'once',
      PROXIMA_K8S_EXCLUDE_NAMESPACES: 'kube-system, monitoring',
    });
    const cluster = await eventually('the cluster row', () =>
      world.clusterOf(agentId),
    );

    // Assess
    expect(run).toEqual({ code: 0, stderr: '' });
    expect(cluster.name).toBe('once');
    const { message } = await lastPublished(agentId);
    const excluded = expectedMessage(['kube-system', 'monitoring']);
    expect(kindCounts(message)).toEqual(kindCounts(excluded));
    expect(kindCounts(message)).not.toEqual(kindCounts(expectedMessage()));
    expect(message.collection?.excluded_namespaces).toEqual([
      'kube-system',
      'monitoring',
    ]);
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      storedCounts(message),
    );
    const kept = await query<{ namespace: string }>(
      world.database.db,
      'select distinct namespace from k8s_pods where cluster_id = $1',
      [cluster.id],
    );
    expect(kept.map((r) => r.namespace)).not.toContain('kube-system');
  });

  it('--once inventories a cluster with Argo CD, no Rollouts and metrics-server down, and exits 0', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const objects: ClusterObjects = {
      ...allRealObjects(),
      rollouts: undefined,
      argocdApplications: [ARGO_CD_APPLICATION],
    };
    const { fake: shaped, kubeconfig } = await clusterServing(
      'argocd',
      objects,
    );
    // metrics.k8s.io registered by its APIService, its backend down.
    shaped.unavailable('metrics.k8s.io/v1beta1');

    // Act
    const run = await runOnceAgainst(kubeconfig, agentId).finally(() =>
      shaped.stop(),
    );
    const message = await publishedAndStored(agentId);

    // Assess
    expect(run.code).toBe(0);
    expect(
      notCollectedLines(run.stderr).map((l) => [l.kind, l.reason, l.level]),
    ).toEqual([
      ['nodes.metrics.k8s.io/v1beta1', 'unavailable', 'WARN'],
      ['pods.metrics.k8s.io/v1beta1', 'unavailable', 'WARN'],
    ]);
    expect(kindCounts(message)).toEqual(
      kindCounts(expectedMessage([], objects)),
    );
    expect(message.workloads?.some((w) => w.kind === 'Rollout')).toBe(false);
    expect(message.argocd_applications?.map((a) => a.name)).toEqual(['shop']);
    expect(message.nodes?.length).toBeGreaterThan(0);
    expect(message.nodes?.every((n) => n.usage === null)).toBe(true);
    const apps = await query<{ name: string }>(
      world.database.db,
      `select a.name from argocd_applications a
       join clusters c on c.id = a.cluster_id where c.agent_id = $1`,
      [agentId],
    );
    expect(apps.map((r) => r.name)).toEqual(['shop']);
  });

  it('--once inventories a cluster with neither Argo product on an older apiserver (plain-text 404s), and exits 0', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const objects: ClusterObjects = {
      ...allRealObjects(),
      rollouts: undefined,
    };
    const { fake: shaped, kubeconfig } = await clusterServing(
      'neither',
      objects,
      {
        notFound: 'plain',
        gitVersion: 'v1.23.17',
      },
    );

    // Act
    const run = await runOnceAgainst(kubeconfig, agentId).finally(() =>
      shaped.stop(),
    );
    const message = await publishedAndStored(agentId);

    // Assess
    expect(run).toEqual({ code: 0, stderr: '' });
    expect(kindCounts(message)).toEqual(
      kindCounts(expectedMessage([], objects)),
    );
    expect(message.workloads?.some((w) => w.kind === 'Rollout')).toBe(false);
    expect(message.argocd_applications).toBeUndefined();
  });

  it('--once exits 1 and publishes nothing when a core list answers 5xx', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const { fake: failing, kubeconfig } = await clusterServing(
      'core-5xx',
      allRealObjects(),
    );
    failing.fail('v1', 'pods', 500);

    // Act
    const run = await runOnceAgainst(kubeconfig, agentId).finally(() =>
      failing.stop(),
    );

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'agent --once failed: listing pods.v1 failed: Internal error occurred',
    );
    expect(await publishedAnything(agentId)).toBe(false);
  });

  it('--once exits 1 and publishes nothing when the apiserver does not answer', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const gone = await startFakeKube();
    const kubeconfig = await kubeconfigOf(gone, 'gone');
    await gone.stop();

    // Act
    const run = await runOnceAgainst(kubeconfig, agentId);

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(
      /agent --once failed: the Kubernetes API at \S+ did not answer \/version/,
    );
    expect(await publishedAnything(agentId)).toBe(false);
  });

  it('--once exits non-zero, naming the failure, when NATS does not answer', {
    timeout: 60_000,
  }, async () => {
    // Prepare
    const url = `nats://127.0.0.1:${await freePort()}`;

    // Act
    const run = await runOnceProcess({
      KUBECONFIG: kubeconfigPath,
      NATS_URL: url,
      PROXIMA_CLIENT: world.tenant.clientSlug,
      PROXIMA_ENVIRONMENT: world.tenant.envSlug,
      PROXIMA_AGENT_ID: randomUUID(),
    });

    // Assess
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('agent --once failed');
  });

  it('--once publishes over TLS to a server a private authority signed, logged in by NATS_CREDS and trusting NATS_CA, as the Deployment runs it: its Secret laid out by the kubelet, read as its runAsUser', {
    timeout: 120_000,
  }, async ({ skip }) => {
    const cannot = cannotRunAsPod();
    if (cannot) skip(cannot);
    // Prepare: production's shape of server, and the agent's pod as
    // infra/agent/deployment.yaml makes it (test/helpers/agent-pod.ts): the
    // Secret's files owned by root, group and mode from the manifest, the
    // bundled agent run as its runAsUser with fsGroup as a supplementary group.
    const server = await startNatsServer({ creds: true, tls: true });
    const pod = await agentPod({
      secrets: {
        'proxima-agent-nats': {
          'nats.creds': (await server.userCreds('agent'))!,
          'ca.crt': server.ca!.pem,
        },
      },
      kubeconfig: kube.kubeConfig.exportConfig(),
    });
    try {
      const reader = await connectNats({
        url: server.url,
        creds: (await server.userCreds('reader'))!,
        ca: server.ca!.pem,
        waitOnFirstConnect: false,
      });
      const jsm = await jetstreamManager(reader);
      await jsm.streams.add({
        name: DEFAULT_STREAM,
        subjects: ['proxima.*.*.*.*'],
      });
      const agentId = randomUUID();
      // The ConfigMap proxima-agent as infra/agent/README.md creates it.
      const settings = {
        NATS_URL: server.url,
        PROXIMA_CLIENT: world.tenant.clientSlug,
        PROXIMA_ENVIRONMENT: world.tenant.envSlug,
        PROXIMA_AGENT_ID: agentId,
      };
      const creds = await stat(
        join(pod.mounts['/etc/proxima/nats']!, 'nats.creds'),
      );

      // Act
      const trusting = await pod.run(['--once'], {
        configMaps: {
          'proxima-agent': {
            ...settings,
            NATS_CA: '/etc/proxima/nats/ca.crt',
          },
        },
        env: { LOG_LEVEL: 'WARN' },
      });
      const untrusting = await pod.run(['--once'], {
        configMaps: { 'proxima-agent': settings },
        env: { LOG_LEVEL: 'WARN' },
      });

      // Assess
      expect(trusting).toEqual({ code: 0, stderr: '' });
      const stored = await jsm.streams.getMessage(DEFAULT_STREAM, {
        last_by_subj: world.subjectFor(agentId),
      });
      expect(stored?.seq).toBe(1);
      expect(untrusting.code).toBe(1);
      expect(untrusting.stderr).toMatch(
        /unable to (verify the first certificate|get local issuer certificate)/i,
      );
      // Readable through the pod's group, by no one else, the owner root.
      expect(creds.uid).toBe(0);
      expect(pod.user.groups).toContain(creds.gid);
      expect(creds.mode & 0o7777).toBe(0o440);
      await reader.close();
    } finally {
      await pod.remove();
      await server.stop();
    }
  });

  it('--once refuses a configuration without its tenant, naming each variable', {
    timeout: 60_000,
  }, async () => {
    // Act
    const run = await runOnceProcess({
      KUBECONFIG: kubeconfigPath,
      NATS_URL: world.nats.url,
      PROXIMA_AGENT_ID: randomUUID(),
    });

    // Assess
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('PROXIMA_CLIENT: required by the agent');
    expect(run.stderr).toContain('PROXIMA_ENVIRONMENT: required by the agent');
  });

  it('npm run seed with a reachable kube-context builds the message through the same lister and collector', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const client = world.tenant.clientSlug;
    const env = world.tenant.envSlug;
    const agentId = seedAgentId(client, env, 'seeded');

    // Act
    const run = await runScript(['scripts/seed.ts', client, env, 'seeded'], {
      KUBECONFIG: kubeconfigPath,
      NATS_URL: world.nats.url,
    });
    const cluster = await eventually('the seeded cluster', () =>
      world.clusterOf(agentId),
    );

    // Assess
    expect(run.code).toBe(0);
    const { message } = await lastPublished(agentId);
    expect(kindCounts(message)).toEqual(kindCounts(expectedMessage()));
    expect(message.agent_version).toBe('v0.9.0');
    expect(message.cluster.api_server_url).toBe(kube.url);
    expect(await countRows(world.database.db, cluster.id)).toEqual(
      storedCounts(message),
    );
  });

  it('npm run agent serves /healthz, publishes, and exits 0 on SIGTERM after draining', {
    timeout: 120_000,
  }, async () => {
    // Prepare
    const agentId = randomUUID();
    const port = await freePort();
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'functions/agent/main.ts'],
      {
        env: {
          PATH: process.env.PATH ?? '',
          LOG_LEVEL: 'WARN',
          KUBECONFIG: kubeconfigPath,
          NATS_URL: world.nats.url,
          PROXIMA_CLIENT: world.tenant.clientSlug,
          PROXIMA_ENVIRONMENT: world.tenant.envSlug,
          PROXIMA_AGENT_ID: agentId,
          AGENT_HEALTH_PORT: String(port),
        },
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code) => resolve(code)),
    );

    // Act
    const status = await eventually('/healthz to answer 200', async () => {
      const res = await fetch(`http://127.0.0.1:${port}/healthz`);
      return res.status === 200 && res.status;
    });
    const cluster = await eventually('the cluster row', () =>
      world.clusterOf(agentId),
    );
    child.kill('SIGTERM');
    const code = await exited;

    // Assess
    expect(status).toBe(200);
    expect(cluster.name).toBe('fake');
    expect(code).toBe(0);
  });
});

describe('what the agent publishes holds no secret', () => {
  /** Planted on every object the fake apiserver serves. */
  const PLANTED = {
    'example.com/db-password': 'hunter2hunter2',
    'example.com/api-token': 'tok-4f9a8b7c6d5e',
    'example.com/notes':
      'connect with postgres://app:S3cretPassw0rd@db:5432/app then retry',
    'example.com/owner': 'team-shop',
    'kubectl.kubernetes.io/last-applied-configuration':
      '{"metadata":{"annotations":{"password":"L4stApplied"}}}',
  };
  const SECRETS = [
    'hunter2hunter2',
    'tok-4f9a8b7c6d5e',
    'S3cretPassw0rd',
    'L4stApplied',
    'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhcGkifQ.c2lnbmF0dXJl',
    'glpat-Abcdefghij0123456789',
  ];

  const LEAKY_EVENT = `Readiness probe failed: Authorization: Bearer ${SECRETS[4]} token=${SECRETS[5]}`;

  function planted(objects: ClusterObjects): ClusterObjects {
    const out: Record<string, unknown> = {};
    for (const [field, list] of Object.entries(objects)) {
      if (!Array.isArray(list)) {
        out[field] = list;
        continue;
      }
      out[field] = list.map((object: K8sObject) => ({
        ...object,
        metadata: {
          ...object.metadata,
          annotations: { ...object.metadata?.annotations, ...PLANTED },
        },
      }));
    }
    const [first] = (objects.events ?? []) as K8sObject[];
    out.events = [
      ...((out.events as K8sObject[]) ?? []),
      {
        ...first,
        metadata: { ...first?.metadata, name: 'leaky.17a1', uid: 'leaky-1' },
        // core/v1 says message, events.k8s.io/v1 note: both carry it.
        message: LEAKY_EVENT,
        note: LEAKY_EVENT,
      },
    ];
    return out as ClusterObjects;
  }

  it('passes every annotation of every row through the key-aware detector and scrubs event messages', {
    timeout: 60_000,
  }, async () => {
    // Prepare
    const leaky = await startFakeKube();
    serveCluster(leaky, planted(allRealObjects()));
    const options = agentOptions({ kubeConfig: leaky.kubeConfig });
    const agent = new Agent(options);

    // Act
    const result = await agent.syncOnce().finally(async () => {
      await agent.stop();
      await leaky.stop();
    });
    const { message } = await lastPublished(options.agentId);

    // Assess
    expect(result.publish.published).toBe(true);
    const text = JSON.stringify(message);
    for (const secret of SECRETS) expect(text).not.toContain(secret);
    let annotated = 0;
    for (const kind of KIND_ORDER) {
      for (const row of (message[kind] ?? []) as {
        annotations?: Record<string, string>;
      }[]) {
        if (row.annotations === undefined) continue;
        annotated++;
        expect(row.annotations).not.toHaveProperty(
          'kubectl.kubernetes.io/last-applied-configuration',
        );
        expect(row.annotations['example.com/owner']).toBe('team-shop');
        expect(row.annotations['example.com/db-password']).toBe(REDACTED);
        for (const [key, value] of Object.entries(row.annotations)) {
          expect(sanitizeAnnotationValue(key, value), `${kind} ${key}`).toBe(
            value,
          );
        }
      }
    }
    expect(annotated).toBeGreaterThan(10);
    const event = message.events?.find((e) => e.message?.includes('Readiness'));
    expect(event?.message).toBe(
      `Readiness probe failed: Authorization: ${REDACTED}`,
    );
  });
});
