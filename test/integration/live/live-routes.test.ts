/**
 * The live routes end to end: the local API server, a real PostgreSQL and a
 * real nats-server, with the agent's own kube_query responder
 * (shared/agent/responder.ts) answering on each cluster's command subject
 * from fixture objects on a fake Kubernetes API server. A tap beside it
 * keeps what the backend asked. Hand-made agents stand in only where the
 * real one cannot misbehave: a reply that breaks the contract, an error
 * message carrying a secret, an agent that never answers.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  afterAll,
  beforeAll,
  beforeEach,
  describe,
  expect,
  it,
  vi,
} from 'vitest';
import { startKubeQueryResponder } from '../../../shared/agent/responder.ts';
import { readCaller } from '../../../shared/auth/caller.ts';
import type { K8sObject } from '../../../shared/collector/k8s.ts';
import { redactObject } from '../../../shared/collector/redact.ts';
import { query } from '../../../shared/db/pool.ts';
import type { LogsRequest } from '../../../shared/live/kube-query.ts';
import { UNSTAMPED_NOTE } from '../../../shared/live/logs.ts';
import { getLiveNats, setLiveNatsTarget } from '../../../shared/live/nats.ts';
import { readLive } from '../../../shared/live/read.ts';
import { logger } from '../../../shared/observability/logger.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
  insertGrant,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { type FakeKube, startFakeKube } from '../../helpers/fake-kube.ts';
import {
  type Answer,
  startResponder,
  type TestResponder,
  tapCommands,
} from '../../helpers/kube-query-responder.ts';
import { startNatsServer, type TestNatsServer } from '../../helpers/nats.ts';
import { captureStdout } from '../sweeps/support.ts';

/** A real Deployment, as the apiserver serves it (with managedFields). */
const DEPLOYMENT: K8sObject = {
  ...JSON.parse(
    readFileSync(
      new URL(
        '../../fixtures/real/deployment-icx-db-secretkeyref-gke.json',
        import.meta.url,
      ),
      'utf8',
    ),
  ),
};
DEPLOYMENT.metadata = {
  ...DEPLOYMENT.metadata,
  managedFields: [
    {
      manager: 'kubectl-client-side-apply',
      operation: 'Update',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
    },
  ],
};
/** What the agent sends of it: redacted before it leaves the cluster. */
const REDACTED = redactObject(DEPLOYMENT);
const DEPLOYMENT_UID: string = DEPLOYMENT.metadata.uid;

/** The Deployment's two ReplicaSets; the older one without a template. */
const REPLICA_SETS: K8sObject[] = [
  {
    metadata: {
      name: 'icx-db-7d9f8c5b4',
      namespace: 'icx',
      uid: randomUUID(),
      creationTimestamp: '2026-09-30T10:00:00Z',
      labels: { 'pod-template-hash': '7d9f8c5b4' },
      annotations: { 'deployment.kubernetes.io/revision': '2' },
      ownerReferences: [{ kind: 'Deployment', uid: DEPLOYMENT_UID }],
    },
    spec: {
      replicas: 3,
      template: {
        spec: { containers: [{ name: 'db', image: 'postgres:16' }] },
      },
    },
  },
  {
    metadata: {
      name: 'icx-db-5c6d7e8f9',
      namespace: 'icx',
      uid: randomUUID(),
      creationTimestamp: '2026-09-01T10:00:00Z',
      labels: { 'pod-template-hash': '5c6d7e8f9' },
      annotations: { 'deployment.kubernetes.io/revision': '1' },
      ownerReferences: [{ kind: 'Deployment', uid: DEPLOYMENT_UID }],
    },
    spec: { replicas: 0 },
  },
];

const pod = (name: string, containers: string[], init: string[] = []) => ({
  metadata: { name, namespace: 'icx', uid: randomUUID() },
  spec: {
    containers: containers.map((c) => ({ name: c, image: 'app:1' })),
    initContainers: init.map((c) => ({ name: c, image: 'app:1' })),
  },
});

/** What the apiserver holds of each container's output. */
const LOG_LINES = [
  { ts: '2026-10-01T11:59:01.123456789Z', text: 'starting server on :8080' },
  {
    ts: '2026-10-01T11:59:02.123456789Z',
    text: 'connecting with password=hunter2hunter2 to db',
  },
  {
    ts: '2026-10-01T11:59:03.123456789Z',
    text: 'Authorization: Bearer abc.def.ghi',
  },
];

const OPERATOR = 'olga.operator@example.test';
const VIEWER = 'victor.viewer@example.test';
const ADMIN = 'ada.admin@example.test';
const OUTSIDER = 'otto.outsider@example.test';

const observedAt = '2026-10-01T12:00:00.000Z';

/** A hand-made agent whose errors carry a secret in their message. */
const leakyAnswer: Answer = () => ({
  ok: false,
  agent_version: 'v0.9.0',
  error: {
    code: 'not_found',
    message:
      'deployments.apps "missing" not found; retried with token=s3cr3tT0kenValue',
  },
});

/**
 * A v0.7.12 agent's logs reply, as that release sends it: it predates log
 * timestamps, so its result has no `timestamps` field and its lines no
 * stamp.
 */
const answerAsV0712: Answer = (request) =>
  request.query === 'logs'
    ? {
        ok: true,
        agent_version: 'v0.7.12',
        observed_at: observedAt,
        result: {
          pod: request.pod,
          container: request.container ?? 'app',
          previous: request.previous,
          lines: ['starting server on :8080', 'token=s3cr3tT0kenValue ready'],
          truncated: false,
        },
      }
    : undefined;

describe('live routes', () => {
  let database: TestDatabase;
  let nats: TestNatsServer;
  let api: TestApi;
  let kube: FakeKube;
  /** The real responders' connection (the agent's own). */
  let agentNc: NatsConnection;
  const stops: (() => Promise<void>)[] = [];
  let clientId: string;
  let environmentId: string;
  const responders: TestResponder[] = [];
  /** A cluster, its agent, and what was asked of that agent. */
  const clusters: Record<
    string,
    { id: string; agentId: string; responder?: TestResponder }
  > = {};
  let foreignClusterId: string;
  const tokens: Record<string, string> = {};

  /**
   * A cluster row and its agent: the real responder reporting `agent`
   * (a version), a hand-made one (`answer`), or none.
   */
  async function addCluster(
    name: string,
    columns: Record<string, unknown>,
    agent?: { version: string } | { answer: Answer },
  ) {
    const agentId = randomUUID();
    const id = await insertCluster(database.db, {
      clientId,
      environmentId,
      name,
      agent_id: agentId,
      ...columns,
    });
    let responder: TestResponder | undefined;
    if (agent && 'version' in agent) {
      const real = await startKubeQueryResponder({
        nc: agentNc,
        agentId,
        kubeConfig: kube.kubeConfig,
        agentVersion: agent.version,
        now: () => new Date(observedAt),
      });
      stops.push(() => real.stop());
      responder = await tapCommands(nats.url, agentId);
    } else if (agent) {
      responder = await startResponder(nats.url, agentId, agent.answer);
    }
    if (responder) responders.push(responder);
    clusters[name] = { id, agentId, ...(responder ? { responder } : {}) };
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    nats = await startNatsServer();
    api = await startTestApi(database);
    kube = await startFakeKube();
    kube.add('apps/v1', 'deployments', [DEPLOYMENT]);
    kube.add('apps/v1', 'replicasets', REPLICA_SETS);
    kube.add('v1', 'pods', [
      pod('icx-db-1', ['app'], ['db']),
      pod('p', ['app']),
      pod('multi', ['app', 'sidecar']),
    ]);
    for (const name of ['icx-db-1', 'p']) {
      kube.setLogs('icx', name, 'app', LOG_LINES);
    }
    kube.setLogs('icx', 'icx-db-1', 'db', LOG_LINES, true);
    agentNc = await connect({ servers: nats.url, name: 'test-agent' });
    await setLiveNatsTarget({ url: nats.url });
    clientId = await insertClient(database.db, 'acme');
    environmentId = await insertEnvironment(database.db, clientId, 'prod');
    const otherClient = await insertClient(database.db, 'globex');
    const otherEnv = await insertEnvironment(database.db, otherClient, 'prod');
    foreignClusterId = await insertCluster(database.db, {
      clientId: otherClient,
      environmentId: otherEnv,
      name: 'foreign',
      agent_version: 'v0.9.0',
    });
    await addCluster(
      'current',
      { agent_version: 'v0.9.0' },
      { version: 'v0.9.0' },
    );
    await addCluster(
      'old',
      { agent_version: 'v0.7.12' },
      { version: 'v0.7.12' },
    );
    await addCluster(
      'v0.7.12-reply',
      { agent_version: 'v0.7.12' },
      { answer: answerAsV0712 },
    );
    await addCluster(
      'ancient',
      { agent_version: 'v0.7.11' },
      { version: 'v0.7.11' },
    );
    await addCluster('unversioned', {}, { version: 'v0.9.0' });
    await addCluster(
      'offline',
      {
        agent_version: 'v0.9.0',
        agent_status: 'disconnected',
        last_seen_at: new Date('2026-10-01T09:30:00Z'),
      },
      { version: 'v0.9.0' },
    );
    await addCluster('silent-agent', { agent_version: 'v0.9.0' });
    await addCluster(
      'garbled',
      { agent_version: 'v0.9.0' },
      { answer: () => ({ ok: true, agent_version: 'v0.9.0' }) },
    );
    await addCluster(
      'not-json',
      { agent_version: 'v0.9.0' },
      {
        answer: () =>
          new TextEncoder().encode('password=hunter2xyz, not a reply'),
      },
    );
    await addCluster(
      'leaky',
      { agent_version: 'v0.9.0' },
      { answer: leakyAnswer },
    );
    await insertGrant(database.db, {
      email: OPERATOR,
      role: 'operator',
      clientId,
    });
    await insertGrant(database.db, { email: VIEWER, role: 'viewer', clientId });
    await insertGrant(database.db, { email: ADMIN, role: 'admin', clientId });
    await insertGrant(database.db, {
      email: OUTSIDER,
      role: 'admin',
      clientId: otherClient,
    });
    for (const email of [OPERATOR, VIEWER, ADMIN, OUTSIDER]) {
      tokens[email] = await api.token(email);
    }
  });

  afterAll(async () => {
    for (const responder of responders) await responder.stop();
    for (const stop of stops) await stop();
    await agentNc?.drain();
    await kube?.stop();
    await setLiveNatsTarget(undefined);
    await api?.close();
    await nats?.stop();
    await database?.drop();
  });

  beforeEach(async () => {
    for (const responder of responders) {
      responder.requests.length = 0;
      responder.refused.length = 0;
    }
    await query(database.db, 'delete from live_read_audit');
  });

  const path = (cluster: string, route: string, params: string) =>
    `/api/v1/clusters/${clusters[cluster]?.id ?? cluster}/live/${route}?${params}`;
  const get = (email: string, cluster: string, route: string, params = '') =>
    api.get(path(cluster, route, params), tokens[email]);
  const asked = (cluster: string) =>
    clusters[cluster]?.responder?.requests ?? [];
  const askedLogs = (cluster: string) => asked(cluster) as LogsRequest[];

  async function auditRows() {
    return query<Record<string, unknown>>(
      database.db,
      'select * from live_read_audit order by id',
    );
  }

  describe('manifest', () => {
    it('returns the object the agent read, with its notes, and audits the read', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'current',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        kind: 'Deployment',
        namespace: 'icx',
        name: 'icx-db',
        object: REDACTED.object,
        notes: REDACTED.notes,
        observed_at: observedAt,
      });
      expect(response.body.data.object.metadata.managedFields).toBeUndefined();
      expect(REDACTED.notes.join(' ')).toContain('managedFields');
      const [request] = asked('current');
      expect(request).toMatchObject({
        type: 'kube_query',
        version: 1,
        actor: OPERATOR,
        query: 'manifest',
        kind: 'Deployment',
        namespace: 'icx',
        name: 'icx-db',
      });
      expect(Object.keys(request ?? {}).sort()).toEqual([
        'actor',
        'kind',
        'name',
        'namespace',
        'query',
        'request_id',
        'type',
        'version',
      ]);
      const [row] = await auditRows();
      expect(row).toMatchObject({
        cluster_id: clusters.current?.id,
        cluster_name: 'current',
        client_id: clientId,
        environment_id: environmentId,
        email: OPERATOR,
        subject: `test:${OPERATOR}`,
        actor: OPERATOR,
        route: 'manifest',
        kind: 'Deployment',
        namespace: 'icx',
        name: 'icx-db',
        pod: null,
        outcome: 'ok',
        status: 200,
        request_id: request?.request_id,
        bytes: Buffer.byteLength(JSON.stringify(response.body.data)),
      });
      expect(row?.duration_ms).toBeGreaterThanOrEqual(0);
    });

    /** The 502 agent_error message of `cluster`'s agent for a missing object. */
    async function agentErrorOf(cluster: string): Promise<string> {
      const response = await get(
        OPERATOR,
        cluster,
        'manifest',
        'kind=Deployment&namespace=icx&name=missing',
      );
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('agent_error');
      return response.body.error.message;
    }

    it('passes an agent error on as 502 agent_error with its message sanitized', async () => {
      // Act: an agent whose message carries a secret.
      const message = await agentErrorOf('leaky');

      // Assess
      expect(message).toContain('deployments.apps "missing" not found');
      expect(message).not.toContain('s3cr3tT0kenValue');
    });

    it("passes the agent's not_found on as 502 agent_error, and audits it", async () => {
      // Act
      const message = await agentErrorOf('current');

      // Assess
      expect(message).toContain('Deployment icx/missing not found');
      const rows = await auditRows();
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        outcome: 'agent_error',
        status: 502,
        bytes: 0,
      });
      expect(JSON.stringify(rows[0])).not.toContain('not found');
    });

    it('answers 502 agent_error when the reply breaks the contract', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'garbled',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Assess
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('agent_error');
    });
  });

  describe('a reply that is not JSON', () => {
    it('answers 502 agent_error and logs none of its text (the parser quotes what it could not read)', async () => {
      // Prepare
      const output = captureStdout();
      let response: Awaited<ReturnType<typeof get>>;
      try {
        // Act
        response = await get(
          OPERATOR,
          'not-json',
          'logs',
          'namespace=icx&pod=p',
        );
      } finally {
        output.restore();
      }

      // Assess
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('agent_error');
      expect(JSON.stringify(output.json())).not.toMatch(/hunter2|password=/);
      expect(JSON.stringify(response.body)).not.toMatch(/hunter2|password=/);
      const failed = output
        .json()
        .find((line) => line.message === 'request failed');
      expect(JSON.stringify(failed)).toContain('not JSON');
    });
  });

  describe('revisions', () => {
    it('returns the rollout history newest first, as the agent sent it', async () => {
      // Act
      const response = await get(
        VIEWER,
        'current',
        'revisions',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        kind: 'Deployment',
        namespace: 'icx',
        name: 'icx-db',
        truncated: false,
        notes: [],
        observed_at: observedAt,
      });
      expect(
        response.body.data.revisions.map(
          (r: { revision: number }) => r.revision,
        ),
      ).toEqual([2, 1]);
      expect(response.body.data.revisions[1].pod_template).toBeNull();
      expect(asked('current')[0]).toMatchObject({
        query: 'revisions',
        actor: VIEWER,
      });
    });
  });

  describe('logs', () => {
    it('splits each stamped line into ts and text and sanitizes the text', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'current',
        'logs',
        'namespace=icx&pod=icx-db-1',
      );

      // Assess
      expect(response.status).toBe(200);
      const data = response.body.data;
      expect(data).toMatchObject({
        namespace: 'icx',
        pod: 'icx-db-1',
        container: 'app',
        previous: false,
        truncated: false,
        timestamps: true,
        notes: [],
      });
      expect(data.containers).toBeUndefined();
      expect(data.lines[0]).toEqual({
        ts: '2026-10-01T11:59:01.123456789Z',
        text: 'starting server on :8080',
      });
      expect(data.lines[1].ts).toBe('2026-10-01T11:59:02.123456789Z');
      expect(data.lines[1].text).toContain('connecting with password=');
      expect(data.lines[1].text).not.toContain('hunter2');
      expect(data.lines[2].text).not.toContain('abc.def.ghi');
      expect(asked('current')[0]).toMatchObject({
        query: 'logs',
        tail: 100,
        previous: false,
        timestamps: true,
      });
      const [row] = await auditRows();
      expect(row).toMatchObject({
        route: 'logs',
        pod: 'icx-db-1',
        outcome: 'ok',
      });
      expect(JSON.stringify(row)).not.toContain('starting server');
    });

    it('asks for 300 lines on a follow read, whatever tail says', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'current',
        'logs',
        'namespace=icx&pod=icx-db-1&container=db&tail=5&previous=true&since_time=2026-10-01T11:58:00Z',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(asked('current')[0]).toMatchObject({
        tail: 300,
        container: 'db',
        previous: true,
        since_time: '2026-10-01T11:58:00.000Z',
        timestamps: true,
      });
      const [row] = await auditRows();
      expect(row).toMatchObject({ container: 'db', previous: true });
      expect((row?.since_time as Date | undefined)?.toISOString()).toBe(
        '2026-10-01T11:58:00.000Z',
      );
    });

    it('says truncated when the read hit its line cap', async () => {
      const response = await get(
        OPERATOR,
        'current',
        'logs',
        'namespace=icx&pod=icx-db-1&tail=3',
      );
      expect(response.status).toBe(200);
      expect(response.body.data.truncated).toBe(true);
      expect(askedLogs('current')[0]?.tail).toBe(3);
    });

    it("answers a pod with several containers with no lines and the pod's containers", async () => {
      // Act
      const response = await get(
        OPERATOR,
        'current',
        'logs',
        'namespace=icx&pod=multi',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        pod: 'multi',
        container: null,
        lines: [],
        containers: ['app', 'sidecar'],
      });
    });

    it('serves a plain tail from a v0.7.12 agent unstamped, with a note, without asking for timestamps', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'old',
        'logs',
        'namespace=icx&pod=icx-db-1',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data.timestamps).toBe(false);
      expect(response.body.data.notes).toEqual([UNSTAMPED_NOTE]);
      for (const line of response.body.data.lines) expect(line.ts).toBeNull();
      expect(response.body.data.lines[0].text).toBe('starting server on :8080');
      const [request] = askedLogs('old');
      expect(request?.timestamps).toBe(false);
      expect(request?.since_time).toBeUndefined();
    });
    it("serves a v0.7.12 agent's own reply, which has no timestamps field, unstamped with a note", async () => {
      // Act
      const response = await get(
        OPERATOR,
        'v0.7.12-reply',
        'logs',
        'namespace=icx&pod=p',
      );

      // Assess
      expect(response.status).toBe(200);
      expect(response.body.data).toMatchObject({
        namespace: 'icx',
        pod: 'p',
        container: 'app',
        timestamps: false,
        truncated: false,
        notes: [UNSTAMPED_NOTE],
        observed_at: observedAt,
        lines: [
          { ts: null, text: 'starting server on :8080' },
          { ts: null, text: 'token=[REDACTED] ready' },
        ],
      });
      expect(askedLogs('v0.7.12-reply')).toHaveLength(1);
    });
  });

  describe('agent checks (the agent is never asked when one fails)', () => {
    it.each([
      [
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
        'old',
        'v0.8.0',
        'v0.7.12',
      ],
      [
        'revisions',
        'kind=StatefulSet&namespace=icx&name=icx-db',
        'old',
        'v0.8.0',
        'v0.7.12',
      ],
      [
        'logs',
        'namespace=icx&pod=p&since_time=2026-10-01T11:58:00Z',
        'old',
        'v0.8.0',
        'v0.7.12',
      ],
      ['logs', 'namespace=icx&pod=p', 'ancient', 'v0.7.12', 'v0.7.11'],
      ['logs', 'namespace=icx&pod=p', 'unversioned', 'v0.7.12', null],
      [
        'manifest',
        'kind=Pod&namespace=icx&name=p',
        'unversioned',
        'v0.8.0',
        null,
      ],
    ])(
      '%s (%s) on the %s agent is 409 agent_too_old',
      async (route, params, cluster, required, version) => {
        // Act
        const response = await get(OPERATOR, cluster, route, params);

        // Assess
        expect(response.status).toBe(409);
        expect(response.body.error.code).toBe('agent_too_old');
        expect(response.body.error.details).toEqual({
          required_version: required,
          agent_version: version,
        });
        expect(asked(cluster)).toHaveLength(0);
        const rows = await auditRows();
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({
          outcome: 'agent_too_old',
          status: 409,
        });
      },
    );

    it('answers 409 agent_offline naming the last-seen time', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'offline',
        'logs',
        'namespace=icx&pod=p',
      );

      // Assess
      expect(response.status).toBe(409);
      expect(response.body.error.code).toBe('agent_offline');
      expect(response.body.error.message).toContain('2026-10-01T09:30:00.000Z');
      expect(asked('offline')).toHaveLength(0);
    });
  });

  describe('NATS failures', () => {
    it('answers 502 agent_unreachable when nothing listens on the command subject', async () => {
      // Act
      const response = await get(
        OPERATOR,
        'silent-agent',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Assess
      expect(response.status).toBe(502);
      expect(response.body.error.code).toBe('agent_unreachable');
      const [row] = await auditRows();
      expect(row).toMatchObject({ outcome: 'agent_unreachable', status: 502 });
    });

    it('answers 504 agent_timeout when the agent does not answer in time, and audits it', async () => {
      // Prepare: an agent that takes the request and never answers; the
      // domain call with a short bound stands for the route's 15 s.
      const agentId = randomUUID();
      const mute = await startResponder(nats.url, agentId, () => undefined);
      responders.push(mute);
      const { cluster } = await readCaller(database.db, OPERATOR, {
        clusterId: clusters.current?.id,
      });
      if (!cluster) throw new Error('fixture cluster missing');

      // Act
      const reading = readLive(
        { sub: `test:${OPERATOR}`, email: OPERATOR },
        { ...cluster, agent_id: agentId },
        { route: 'logs', query: { namespace: 'icx', pod: 'p' } },
        {
          db: database.as('api').db,
          nats: getLiveNats,
          timeoutMs: 300,
        },
      );

      // Assess
      await expect(reading).rejects.toMatchObject({
        status: 504,
        code: 'agent_timeout',
      });
      expect(mute.requests).toHaveLength(1);
      const [row] = await auditRows();
      expect(row).toMatchObject({ outcome: 'agent_timeout', status: 504 });
    });

    it('answers 503 live_unavailable without a NATS connection', async () => {
      // Prepare
      await setLiveNatsTarget(undefined);
      try {
        // Act
        const response = await get(
          OPERATOR,
          'current',
          'logs',
          'namespace=icx&pod=p',
        );

        // Assess
        expect(response.status).toBe(503);
        expect(response.body.error.code).toBe('live_unavailable');
        const [row] = await auditRows();
        expect(row).toMatchObject({ outcome: 'live_unavailable', status: 503 });
      } finally {
        await setLiveNatsTarget({ url: nats.url });
      }
    });
  });

  describe('the audit trail', () => {
    async function failAuditOn(operation: 'insert' | 'update') {
      await query(
        database.db,
        `create or replace function live_read_audit_refuse() returns trigger
           language plpgsql as $$ begin raise exception 'audit store refuses'; end $$`,
      );
      await query(
        database.db,
        `create trigger refuse_audit before ${operation} on live_read_audit
           for each row execute function live_read_audit_refuse()`,
      );
      return () =>
        query(database.db, 'drop trigger refuse_audit on live_read_audit');
    }

    it('refuses a read whose audit row cannot be written, whatever the agent answers', async () => {
      // Prepare
      const restore = await failAuditOn('insert');
      const errors = vi.spyOn(logger, 'error');
      try {
        // Act
        const response = await get(
          OPERATOR,
          'current',
          'logs',
          'namespace=icx&pod=p',
        );

        // Assess
        expect(response.status).toBe(503);
        expect(response.body.error.code).toBe('audit_unavailable');
        // The agent may have been asked alongside the row's insert: nothing
        // it answered reaches the caller.
        expect(JSON.stringify(response.body)).not.toContain('starting server');
        expect(await auditRows()).toHaveLength(0);
        // Who asked is in the log line, the token's subject beside its email.
        expect(errors).toHaveBeenCalledWith(
          'live read refused: its audit row could not be written',
          expect.objectContaining({
            subject: `test:${OPERATOR}`,
            email: OPERATOR,
          }),
        );
      } finally {
        errors.mockRestore();
        await restore();
      }
    });

    it('refuses a read whose audit row cannot be completed, returning nothing it read', async () => {
      // Prepare
      const restore = await failAuditOn('update');
      try {
        // Act
        const response = await get(
          OPERATOR,
          'current',
          'logs',
          'namespace=icx&pod=p',
        );

        // Assess
        expect(response.status).toBe(503);
        expect(response.body.error.code).toBe('audit_unavailable');
        expect(JSON.stringify(response.body)).not.toContain('starting server');
        const [row] = await auditRows();
        expect(row?.outcome).toBe('pending');
      } finally {
        await restore();
      }
    });

    it('lists the rows to an admin of the client, newest first, filtered by route, user and cluster', async () => {
      // Prepare
      await get(OPERATOR, 'current', 'logs', 'namespace=icx&pod=p');
      await get(
        VIEWER,
        'current',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );
      await get(
        OPERATOR,
        'old',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Act
      const all = await api.get('/api/v1/audit/live-reads', tokens[ADMIN]);
      const logs = await api.get(
        '/api/v1/audit/live-reads?route=logs',
        tokens[ADMIN],
      );
      const byUser = await api.get(
        `/api/v1/audit/live-reads?user=${encodeURIComponent(VIEWER.toUpperCase())}`,
        tokens[ADMIN],
      );
      const byCluster = await api.get(
        `/api/v1/audit/live-reads?cluster_id=${clusters.old?.id}&per_page=1`,
        tokens[ADMIN],
      );

      // Assess
      expect(all.status).toBe(200);
      expect(all.body.meta).toEqual({ total: 3, page: 1, per_page: 50 });
      expect(all.body.data.map((r: { route: string }) => r.route)).toEqual([
        'manifest',
        'manifest',
        'logs',
      ]);
      expect(all.body.data[0]).toMatchObject({
        cluster_name: 'old',
        outcome: 'agent_too_old',
        status: 409,
        email: OPERATOR,
      });
      expect(logs.body.data).toHaveLength(1);
      expect(byUser.body.data.map((r: { email: string }) => r.email)).toEqual([
        VIEWER,
      ]);
      expect(byCluster.body.meta.total).toBe(1);
      expect(byCluster.body.data[0].cluster_id).toBe(clusters.old?.id);
    });

    it('shows an admin of another client none of them, and refuses an operator', async () => {
      // Prepare
      await get(OPERATOR, 'current', 'logs', 'namespace=icx&pod=p');

      // Act
      const outsider = await api.get(
        '/api/v1/audit/live-reads',
        tokens[OUTSIDER],
      );
      const operator = await api.get(
        '/api/v1/audit/live-reads',
        tokens[OPERATOR],
      );
      const bad = await api.get(
        '/api/v1/audit/live-reads?since=yesterday',
        tokens[ADMIN],
      );

      // Assess
      expect(outsider.status).toBe(200);
      expect(outsider.body.data).toEqual([]);
      expect(operator.status).toBe(403);
      expect(bad.status).toBe(400);
      expect(bad.body.error.details).toEqual({ param: 'since' });
    });
  });

  describe('access, then validation', () => {
    it('never opens logs with assets:read', async () => {
      const response = await get(
        VIEWER,
        'current',
        'logs',
        'namespace=icx&pod=p',
      );
      expect(response.status).toBe(403);
      expect(asked('current')).toHaveLength(0);
      expect(await auditRows()).toHaveLength(0);
    });

    it('answers 404 for a cluster of another client before looking at the parameters', async () => {
      const response = await get(OPERATOR, foreignClusterId, 'logs', 'bogus=1');
      expect(response.status).toBe(404);
    });

    it('answers 403 before 400', async () => {
      const response = await get(
        VIEWER,
        'current',
        'logs',
        'namespace=NOT_A_LABEL',
      );
      expect(response.status).toBe(403);
    });

    it.each([
      [
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db&extra=1',
        'extra',
      ],
      ['manifest', 'kind=Secret&namespace=icx&name=creds', 'kind'],
      ['manifest', 'kind=ConfigMap&namespace=icx&name=cfg', 'kind'],
      ['manifest', 'namespace=icx&name=icx-db', 'kind'],
      ['revisions', 'kind=Pod&namespace=icx&name=icx-db', 'kind'],
      ['revisions', 'kind=Deployment&namespace=Icx&name=icx-db', 'namespace'],
      ['revisions', 'kind=Deployment&namespace=icx&name=-bad', 'name'],
      ['logs', 'namespace=icx', 'pod'],
      ['logs', 'namespace=icx&pod=p&container=Bad_Name', 'container'],
      ['logs', 'namespace=icx&pod=p&tail=0', 'tail'],
      ['logs', 'namespace=icx&pod=p&tail=301', 'tail'],
      ['logs', 'namespace=icx&pod=p&tail=1e2', 'tail'],
      ['logs', 'namespace=icx&pod=p&previous=yes', 'previous'],
      ['logs', 'namespace=icx&pod=p&since_time=2026-10-01', 'since_time'],
      ['logs', 'namespace=icx&pod=p&pod=q', 'pod'],
    ])(
      '%s with %s is 400 bad_request naming %s, and the agent is not asked',
      async (route, params, param) => {
        // Act
        const response = await get(OPERATOR, 'current', route, params);

        // Assess
        expect(response.status).toBe(400);
        expect(response.body.error.code).toBe('bad_request');
        expect(response.body.error.details.param).toBe(param);
        expect(asked('current')).toHaveLength(0);
      },
    );
  });

  describe('rate limits, per user, through the shared limiter', () => {
    const LIMITED = 'limited-reader@example.com';
    beforeAll(async () => {
      await insertGrant(database.db, {
        email: LIMITED,
        role: 'operator',
        clientId,
      });
      tokens[LIMITED] = await api.token(LIMITED);
    });

    it('serves 30 log reads a minute, then answers 429 without asking the agent', async () => {
      // Act
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const response = await get(
          LIMITED,
          'current',
          'logs',
          'namespace=icx&pod=icx-db-1',
        );
        statuses.push(response.status);
      }
      const before = asked('current').length;
      const refused = await get(
        LIMITED,
        'current',
        'logs',
        'namespace=icx&pod=icx-db-1',
      );

      // Assess
      expect(statuses).toEqual(Array(30).fill(200));
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(refused.body.error.message).toBe('too many log reads');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(asked('current')).toHaveLength(before);
    });

    it('counts manifest and revisions reads against one budget of 60', async () => {
      // Act
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const manifest = await get(
          LIMITED,
          'current',
          'manifest',
          'kind=Deployment&namespace=icx&name=icx-db',
        );
        const revisions = await get(
          LIMITED,
          'current',
          'revisions',
          'kind=Deployment&namespace=icx&name=icx-db',
        );
        statuses.push(manifest.status, revisions.status);
      }
      const refused = await get(
        LIMITED,
        'current',
        'manifest',
        'kind=Deployment&namespace=icx&name=icx-db',
      );

      // Assess
      expect(statuses).toEqual(Array(60).fill(200));
      expect(refused.status).toBe(429);
      expect(refused.body.error.message).toBe(
        'too many manifest and revisions reads',
      );
    });
  });

  describe('the budget counted with the grants read', () => {
    // Each test spends a budget of its own user's.
    async function user(email: string) {
      await insertGrant(database.db, { email, role: 'operator', clientId });
      tokens[email] = await api.token(email);
      return email;
    }
    const rowsOf = async (email: string) =>
      (await auditRows()).filter((row) => row.email === email);

    it('answers 429 with no audit row once the budget is spent, before a bad parameter and before an agent check', async () => {
      // Prepare
      const email = await user('spent-reader@example.com');
      for (let i = 0; i < 30; i++) {
        await get(email, 'current', 'logs', 'namespace=icx&pod=p');
      }
      const asking = asked('current').length;

      // Act
      const valid = await get(email, 'current', 'logs', 'namespace=icx&pod=p');
      const badParam = await get(email, 'current', 'logs', 'namespace=icx');
      const offline = await get(
        email,
        'offline',
        'logs',
        'namespace=icx&pod=p',
      );

      // Assess
      expect([valid.status, badParam.status, offline.status]).toEqual([
        429, 429, 429,
      ]);
      expect(asked('current')).toHaveLength(asking);
      const rows = await rowsOf(email);
      expect(rows).toHaveLength(30);
      expect(rows.every((row) => row.outcome === 'ok')).toBe(true);
    });

    it('counts a refused parameter and a failed agent check, and audits the check alone', async () => {
      // Prepare
      const email = await user('careless-reader@example.com');
      for (let i = 0; i < 29; i++) {
        const response = await get(email, 'current', 'logs', 'namespace=icx');
        expect(response.status).toBe(400);
      }

      // Act
      const offline = await get(
        email,
        'offline',
        'logs',
        'namespace=icx&pod=p',
      );
      const refused = await get(
        email,
        'current',
        'logs',
        'namespace=icx&pod=p',
      );

      // Assess
      expect(offline.status).toBe(409);
      expect(refused.status).toBe(429);
      const rows = await rowsOf(email);
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({ outcome: 'agent_offline', status: 409 });
    });

    it('counts calls to a cluster the caller cannot see, still answering them 404', async () => {
      // Prepare
      const email = await user('probing-reader@example.com');
      const probes: number[] = [];
      for (let i = 0; i < 30; i++) {
        const response = await get(
          email,
          foreignClusterId,
          'logs',
          'namespace=icx&pod=p',
        );
        probes.push(response.status);
      }

      // Act
      const hidden = await get(
        email,
        foreignClusterId,
        'logs',
        'namespace=icx&pod=p',
      );
      const visible = await get(
        email,
        'current',
        'logs',
        'namespace=icx&pod=p',
      );

      // Assess: the budget is spent, and a 429 still tells nothing of a
      // cluster the caller cannot see.
      expect(probes).toEqual(Array(30).fill(404));
      expect(hidden.status).toBe(404);
      expect(visible.status).toBe(429);
      expect(await rowsOf(email)).toHaveLength(0);
    });

    it('lets the read through, audited, when the limiter fails', async () => {
      // Prepare
      const email = await user('unlimited-reader@example.com');
      await query(
        database.db,
        `create or replace function rate_limits_refuse() returns trigger
           language plpgsql as $$ begin raise exception 'limiter down'; end $$`,
      );
      await query(
        database.db,
        `create trigger refuse_rate_limits before insert or update on api_rate_limits
           for each row execute function rate_limits_refuse()`,
      );
      const warnings = vi.spyOn(logger, 'warn');
      try {
        // Act
        const response = await get(
          email,
          'current',
          'logs',
          'namespace=icx&pod=p',
        );

        // Assess
        expect(response.status).toBe(200);
        expect(warnings).toHaveBeenCalledWith(
          'rate limiter failed; the call goes through',
          expect.objectContaining({ family: 'live-logs' }),
        );
        const rows = await rowsOf(email);
        expect(rows).toHaveLength(1);
        expect(rows[0]).toMatchObject({ outcome: 'ok', status: 200 });
      } finally {
        warnings.mockRestore();
        await query(
          database.db,
          'drop trigger refuse_rate_limits on api_rate_limits',
        );
      }
    });
  });

  it('sends proxima-console:user:<sub> as the actor for a caller without an email', async () => {
    // Only reachable once grants can name a subject; the actor rule itself:
    const { actorOf } = await import('../../../shared/live/read.ts');
    expect(actorOf({ sub: 'svc-42', email: undefined })).toBe(
      'proxima-console:user:svc-42',
    );
    expect(actorOf({ sub: 'x', email: 'a@b.c' })).toBe('a@b.c');
  });

  it('keeps requests of the contract shape (none refused by its schema)', () => {
    for (const responder of responders) expect(responder.refused).toEqual([]);
  });
});
