import { randomUUID } from 'node:crypto';
import { KubeConfig } from '@kubernetes/client-node';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type KubeQueryResponder,
  startKubeQueryResponder,
} from '../../../shared/agent/responder.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import {
  commandSubject,
  type KubeQueryName,
  type KubeQueryReply,
  parseKubeQueryReply,
} from '../../../shared/live/kube-query.ts';
import { type FakeKube, startFakeKube } from '../../helpers/fake-kube.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { readRealFixture } from '../../helpers/real-fixtures.ts';

const AGENT_ID = randomUUID();
const SECRET = 'hunter2-planted-value';

let nats: TestNatsServer;
let nc: NatsConnection;
let kube: FakeKube;
let responder: KubeQueryResponder;
const audit: Record<string, unknown>[] = [];

function deployment() {
  const d = readRealFixture('deployment-icx-db-secretkeyref-gke.json');
  const container = d.spec.template.spec.containers[0];
  container.env.push({
    name: 'DB_URL',
    value: `postgres://app:${SECRET}@db/app`,
  });
  container.readinessProbe = {
    httpGet: {
      path: '/healthz',
      port: 5432,
      httpHeaders: [{ name: 'Authorization', value: `Bearer ${SECRET}` }],
    },
  };
  d.metadata.annotations['example.com/db-password'] = SECRET;
  d.metadata.managedFields = [
    { manager: 'kubectl', operation: 'Update', fieldsV1: { 'f:spec': {} } },
  ];
  return d;
}

function replicaSet(
  owner: { metadata: { uid: string; namespace: string } },
  revision: number,
  padding = 0,
) {
  return {
    metadata: {
      name: `icx-db-${revision}abc`,
      namespace: owner.metadata.namespace,
      uid: randomUUID(),
      creationTimestamp: new Date(Date.UTC(2026, 0, revision))
        .toISOString()
        .replace('.000', ''),
      labels: { 'pod-template-hash': `${revision}abc` },
      annotations: { 'deployment.kubernetes.io/revision': String(revision) },
      ownerReferences: [
        {
          kind: 'Deployment',
          name: 'icx-db',
          uid: owner.metadata.uid,
          controller: true,
        },
      ],
    },
    spec: {
      replicas: revision === 22 ? 1 : 0,
      template: {
        spec: {
          containers: [
            {
              name: 'icx-db',
              image: `postgres:9.${revision}`,
              args: ['x'.repeat(padding)],
              env: [{ name: 'PW', value: SECRET }],
            },
          ],
        },
      },
    },
  };
}

async function ask<Q extends KubeQueryName>(
  query: Q,
  fields: Record<string, unknown>,
): Promise<KubeQueryReply<Q>> {
  const request = {
    type: 'kube_query',
    version: 1,
    request_id: randomUUID(),
    actor: 'alice@example.com',
    query,
    ...fields,
  };
  const msg = await nc.request(
    commandSubject(AGENT_ID),
    JSON.stringify(request),
    { timeout: 15_000 },
  );
  return parseKubeQueryReply(query, JSON.parse(msg.string()));
}

beforeAll(async () => {
  nats = await startNatsServer();
  nc = await connect({ servers: nats.url, name: 'live-test' });
  kube = await startFakeKube();
  const d = deployment();
  kube.add('apps/v1', 'deployments', [d]);
  // 22 revisions, each template about 40 KB: more than 20 and over the budget.
  kube.add(
    'apps/v1',
    'replicasets',
    Array.from({ length: 22 }, (_, i) => replicaSet(d, i + 1, 40_000)),
  );
  kube.add('apps/v1', 'statefulsets', [
    {
      metadata: { name: 'web', namespace: 'icx', uid: 'sts-uid' },
      spec: { template: { spec: { containers: [] } } },
    },
  ]);
  kube.add(
    'apps/v1',
    'controllerrevisions',
    [1, 2].map((n) => ({
      metadata: {
        name: `web-${n}`,
        namespace: 'icx',
        creationTimestamp: `2026-01-0${n}T00:00:00Z`,
        labels: { 'controller-revision-hash': `web-h${n}` },
        ownerReferences: [
          {
            kind: 'StatefulSet',
            name: 'web',
            uid: 'sts-uid',
            controller: true,
          },
        ],
      },
      revision: n,
      data: {
        spec: {
          template: {
            spec: { containers: [{ name: 'nginx', image: `nginx:1.${n}` }] },
          },
        },
      },
    })),
  );
  const sidecarPod = readRealFixture('pod-running-native-sidecar-kind.json');
  const crashPod = readRealFixture(
    'podlist-crashloopbackoff-laststate-managedfields.json',
  ).items[0];
  crashPod.status.containerStatuses[0].lastState.terminated.message = `panic: password=${SECRET}`;
  const bigPod = {
    metadata: { name: 'huge', namespace: 'default' },
    spec: {
      containers: [{ name: 'c', image: 'x', args: ['y'.repeat(600 * 1024)] }],
    },
  };
  kube.add('v1', 'pods', [sidecarPod, crashPod, bigPod]);
  kube.add('v1', 'services', []);
  kube.forbid('services');
  kube.setLogs('default', 'sleep', 'sleep', [
    { ts: '2026-10-01T11:57:59.500000000Z', text: 'first' },
    { ts: '2026-10-01T11:58:00.250000000Z', text: 'second' },
    { ts: '2026-10-01T11:58:01.000000000Z', text: 'third' },
  ]);
  kube.setLogs(
    'default',
    'sleep',
    'sleep',
    [{ ts: '2026-10-01T11:00:00Z', text: 'before restart' }],
    true,
  );
  responder = await startKubeQueryResponder({
    nc,
    agentId: AGENT_ID,
    kubeConfig: kube.kubeConfig,
    logger: {
      info: (message: string, extra?: object) =>
        audit.push({ message, ...extra }),
      warn: () => {},
      error: () => {},
    } as never,
  });
});

afterAll(async () => {
  await responder?.stop();
  await nc?.close();
  await kube?.stop();
  await nats?.stop();
});

describe('kube_query responder', () => {
  it('answers a manifest redacted: no managedFields, last-applied, env or header values, secret annotations', async () => {
    // Act
    const reply = await ask('manifest', {
      kind: 'Deployment',
      namespace: 'icx',
      name: 'icx-db',
    });

    // Assess
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    const text = JSON.stringify(reply.result);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain('managedFields');
    expect(text).not.toContain('last-applied-configuration');
    const container = (reply.result.object as K8sObject).spec.template.spec
      .containers[0];
    expect(container.env[2]).toEqual({
      name: 'DB_URL',
      value: `<redacted: ${`postgres://app:${SECRET}@db/app`.length} chars>`,
    });
    expect(container.env[0].valueFrom.secretKeyRef.name).toBe('icx-creds');
    expect(container.image).toBe('postgres:9.2-alpine');
    expect(reply.notes.join('\n')).toMatch(/managedFields removed/);
    expect(reply.notes.join('\n')).toMatch(/1 literal env value redacted/);
    expect(reply.notes.join('\n')).toMatch(/1 probe header value redacted/);
    expect(reply.agent_version).toBe('v0.9.0');
  });

  it('redacts a pod termination message', async () => {
    // Act
    const reply = await ask('manifest', {
      kind: 'Pod',
      namespace: 'message-pod-crashloop-backoff',
      name: 'init-demo',
    });

    // Assess
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(JSON.stringify(reply.result).includes(SECRET)).toBe(false);
    expect(
      (reply.result.object as K8sObject).status.containerStatuses[0].lastState
        .terminated,
    ).toMatchObject({
      reason: 'ContainerCannotRun',
      message: expect.stringMatching(/^<redacted: \d+ chars>$/),
    });
    expect(reply.notes.join('\n')).toMatch(/termination message redacted/);
  });

  it('lists revisions newest first, at most 20, dropping pod templates once 512 KiB is spent', async () => {
    // Act
    const reply = await ask('revisions', {
      kind: 'Deployment',
      namespace: 'icx',
      name: 'icx-db',
    });

    // Assess
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    const { revisions, truncated } = reply.result;
    // Small projections only: a failing diff of 500 KB objects is slow to print.
    expect(truncated).toBe(true);
    expect(revisions.map((r) => r.revision)).toEqual(
      Array.from({ length: 20 }, (_, i) => 22 - i),
    );
    const newest = revisions[0];
    expect([
      newest?.template_hash,
      newest?.replicas,
      newest?.containers,
    ]).toEqual(['22abc', 1, [{ name: 'icx-db', image: 'postgres:9.22' }]]);
    const kept = revisions.filter((r) => r.pod_template !== null).length;
    expect(kept).toBeGreaterThan(5);
    expect(kept).toBeLessThan(20);
    expect(revisions.slice(0, kept).every((r) => r.pod_template !== null)).toBe(
      true,
    );
    expect(JSON.stringify(reply).includes(SECRET)).toBe(false);
    expect(reply.notes.join('\n')).toMatch(/2 older revisions not shown/);
    expect(reply.notes.join('\n')).toMatch(/budget is spent/);
  });

  it("lists a StatefulSet's ControllerRevisions", async () => {
    const reply = await ask('revisions', {
      kind: 'StatefulSet',
      namespace: 'icx',
      name: 'web',
    });
    expect(reply.ok).toBe(true);
    if (!reply.ok) return;
    expect(
      reply.result.revisions.map((r) => [
        r.revision,
        r.template_hash,
        r.containers[0]?.image,
      ]),
    ).toEqual([
      [2, 'web-h2', 'nginx:1.2'],
      [1, 'web-h1', 'nginx:1.1'],
    ]);
    expect(reply.result.truncated).toBe(false);
  });

  it('reads logs with a tail, timestamps and since_time', async () => {
    // Act
    const tail = await ask('logs', {
      namespace: 'default',
      pod: 'sleep',
      tail: 2,
    });
    const stamped = await ask('logs', {
      namespace: 'default',
      pod: 'sleep',
      container: 'sleep',
      tail: 300,
      timestamps: true,
      since_time: '2026-10-01T11:58:00.900Z',
    });
    const previous = await ask('logs', {
      namespace: 'default',
      pod: 'sleep',
      container: 'sleep',
      previous: true,
    });

    // Assess
    expect(tail.ok && tail.result).toMatchObject({
      container: 'sleep',
      lines: ['second', 'third'],
      truncated: true,
      timestamps: false,
    });
    // The apiserver honours since_time to the second: 11:58:00.250 is included.
    expect(stamped.ok && stamped.result.lines).toEqual([
      '2026-10-01T11:58:00.250000000Z second',
      '2026-10-01T11:58:01.000000000Z third',
    ]);
    expect(stamped.ok && stamped.result.truncated).toBe(false);
    expect(previous.ok && previous.result.lines).toEqual(['before restart']);
    expect(
      kube.requests.some((r) =>
        r.includes('sinceTime=2026-10-01T11%3A58%3A00.900Z'),
      ),
    ).toBe(true);
  });

  it('answers the containers and no lines for a container the pod does not have', async () => {
    const reply = await ask('logs', {
      namespace: 'default',
      pod: 'sleep',
      container: 'nope',
    });
    expect(reply.ok && reply.result).toMatchObject({
      lines: [],
      containers: ['sleep', 'init', 'sidecar'],
    });
  });

  it.each([
    [
      'not_found',
      'manifest',
      { kind: 'Deployment', namespace: 'icx', name: 'missing' },
    ],
    [
      'forbidden',
      'manifest',
      { kind: 'Service', namespace: 'icx', name: 'svc' },
    ],
    [
      'not_installed',
      'manifest',
      { kind: 'Rollout', namespace: 'icx', name: 'canary' },
    ],
    [
      'too_large',
      'manifest',
      { kind: 'Pod', namespace: 'default', name: 'huge' },
    ],
    [
      'bad_request',
      'manifest',
      { kind: 'Secret', namespace: 'icx', name: 'icx-creds' },
    ],
    [
      'bad_request',
      'logs',
      { namespace: 'default', pod: 'sleep', container: 'init', previous: true },
    ],
  ] as const)('answers %s for %s %j', async (code, query, fields) => {
    const reply = await ask(query, fields);
    expect(reply.ok).toBe(false);
    expect(!reply.ok && reply.error.code).toBe(code);
  });

  it('answers not_installed for a Rollout where argoproj.io serves Argo CD alone, not_found once Rollouts are installed', async () => {
    // Prepare: Argo CD's CRD alone serves the group Rollouts live in.
    kube.install('argoproj.io/v1alpha1', 'applications');
    const rollout = { kind: 'Rollout', namespace: 'icx', name: 'canary' };

    // Act
    const argoCdAlone = await ask('manifest', rollout);
    kube.install('argoproj.io/v1alpha1', 'rollouts');
    const installed = await ask('manifest', rollout);
    kube.uninstall('argoproj.io/v1alpha1', 'rollouts');
    kube.uninstall('argoproj.io/v1alpha1', 'applications');

    // Assess
    expect(!argoCdAlone.ok && argoCdAlone.error.code).toBe('not_installed');
    expect(!installed.ok && installed.error.code).toBe('not_found');
  });

  it('answers bad_request to a body that is not JSON', async () => {
    const msg = await nc.request(commandSubject(AGENT_ID), 'not json', {
      timeout: 15_000,
    });
    expect(JSON.parse(msg.string())).toMatchObject({
      ok: false,
      error: { code: 'bad_request' },
    });
  });

  it('answers internal when the apiserver cannot be reached, without its details', async () => {
    // Prepare: a second agent whose kubeconfig points at a closed port.
    const agentId = randomUUID();
    const dead = new KubeConfig();
    dead.loadFromOptions({
      clusters: [
        { name: 'dead', server: 'http://127.0.0.1:9', skipTLSVerify: true },
      ],
      users: [{ name: 'u' }],
      contexts: [{ name: 'dead', cluster: 'dead', user: 'u' }],
      currentContext: 'dead',
    });
    const other = await startKubeQueryResponder({
      nc,
      agentId,
      kubeConfig: dead,
      logger: { info() {}, warn() {}, error() {} } as never,
    });
    try {
      // Act
      const msg = await nc.request(
        commandSubject(agentId),
        JSON.stringify({
          type: 'kube_query',
          version: 1,
          request_id: randomUUID(),
          actor: 'a@b.c',
          query: 'manifest',
          kind: 'Pod',
          namespace: 'x',
          name: 'y',
        }),
        { timeout: 15_000 },
      );
      // Assess
      const reply = parseKubeQueryReply('manifest', JSON.parse(msg.string()));
      expect(!reply.ok && reply.error.code).toBe('internal');
      expect(!reply.ok && reply.error.message).not.toContain('127.0.0.1');
    } finally {
      await other.stop();
    }
  });

  it('audits each request with its actor and outcome', () => {
    const lines = audit.filter((a) => a.message === 'kube_query');
    expect(lines.length).toBeGreaterThan(5);
    expect(lines).toContainEqual(
      expect.objectContaining({
        actor: 'alice@example.com',
        query: 'revisions',
        kind: 'Deployment',
        outcome: 'ok',
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({ outcome: 'forbidden', kind: 'Service' }),
    );
    expect(JSON.stringify(lines).includes(SECRET)).toBe(false);
  });
});
