/**
 * GET /api/v1/clusters/{clusterID}/graph against rows stored by the sync
 * itself: each relation of the table, a NetworkPolicy with
 * matchExpressions, a Service without a selector, a StatefulSet's claim
 * templates, an Argo CD application, a truncated walk, and the route's
 * 404 / 403 / 400 order.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import { insertGrant } from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const NOW = new Date('2026-06-15T12:00:00Z');

const facts = (volumeRefs: string[]) => ({
  containers: [
    {
      name: 'main',
      image: 'main:1',
      env_names: [],
      env_from: [],
      volume_refs: volumeRefs,
    },
  ],
  facts_version: 1,
});

const pod = (
  name: string,
  labels: Record<string, string>,
  extra: Record<string, unknown> = {},
) => ({
  namespace: 'shop',
  name,
  labels,
  phase: 'Running',
  node_name: 'node-a',
  ...extra,
});

/**
 * One cluster's inventory holding every relation of the table. An agent
 * older than the wire's v1.1 sends no ingress default backends and no Argo
 * CD applications.
 */
function inventoryOf(agentId: string, { olderAgent = false } = {}) {
  const ingresses = [
    {
      namespace: 'shop',
      name: 'web',
      rules: [
        {
          host: 'shop.example.com',
          paths: [
            { path: '/', service: 'api', port: 80 },
            { path: '/db', service: 'external-db', port: 5432 },
          ],
        },
      ],
    },
    // No rules: every request goes to the default backend.
    {
      namespace: 'shop',
      name: 'catch-all',
      default_backend: { service: 'external-db', port: 'pg' },
    },
    // A resource backend (a bucket) is no Service.
    {
      namespace: 'shop',
      name: 'static',
      default_backend: { service: null, port: null },
    },
  ].map(({ default_backend, ...rest }) =>
    olderAgent ? rest : { ...rest, default_backend },
  );
  const message = {
    type: 'kubernetes',
    schema_version: 1,
    agent_id: agentId,
    timestamp: NOW.toISOString(),
    cluster: { name: `graph-${agentId.slice(0, 4)}`, version: 'v1.29.4' },
    nodes: [
      { name: 'node-a', status: 'Ready' },
      { name: 'node-b', status: 'NotReady' },
    ],
    namespaces: [{ name: 'shop', status: 'Active' }, { name: 'argocd' }],
    workloads: [
      {
        namespace: 'shop',
        name: 'api',
        kind: 'Deployment',
        replicas_desired: 3,
        replicas_ready: 2,
        spec_facts: facts(['pvc:uploads', 'configmap:api']),
      },
      {
        namespace: 'shop',
        name: 'db',
        kind: 'StatefulSet',
        replicas_desired: 2,
        replicas_ready: 2,
        spec_facts: facts(['pvc-template:data']),
      },
    ],
    pods: [
      pod(
        'api-1',
        { app: 'api', tier: 'web' },
        {
          workload_kind: 'Deployment',
          workload_name: 'api',
          owner_kind: 'ReplicaSet',
          owner_name: 'api-7d9f',
        },
      ),
      pod(
        'api-2',
        { app: 'api', tier: 'web', legacy: 'yes' },
        {
          workload_kind: 'Deployment',
          workload_name: 'api',
          owner_kind: 'ReplicaSet',
          owner_name: 'api-7d9f',
        },
      ),
      pod(
        'db-0',
        { app: 'db' },
        {
          workload_kind: 'StatefulSet',
          workload_name: 'db',
          owner_kind: 'StatefulSet',
          owner_name: 'db',
          node_name: 'node-b',
        },
      ),
      pod(
        'backup-28000-x1',
        { job: 'backup' },
        {
          workload_kind: 'CronJob',
          workload_name: 'backup',
          owner_kind: 'Job',
          owner_name: 'backup-28000',
          phase: 'Succeeded',
        },
      ),
    ],
    services: [
      { namespace: 'shop', name: 'api', selector: { app: 'api' } },
      // No selector: its endpoints are managed by hand; it selects nothing.
      { namespace: 'shop', name: 'external-db', type: 'ClusterIP' },
    ],
    endpoint_slices: [
      {
        namespace: 'shop',
        name: 'api-abc',
        service_name: 'api',
        endpoints: [
          {
            addresses: ['10.0.0.1'],
            ready: true,
            target_ref: { kind: 'Pod', name: 'api-1' },
          },
          {
            addresses: ['10.0.0.2'],
            ready: false,
            target_ref: { kind: 'Pod', name: 'api-2' },
          },
        ],
      },
    ],
    ingresses,
    pvcs: [
      { namespace: 'shop', name: 'uploads', phase: 'Bound' },
      { namespace: 'shop', name: 'data-db-0', phase: 'Bound' },
      { namespace: 'shop', name: 'data-db-1', phase: 'Pending' },
      // Not a claim of db's template: no ordinal after the name.
      { namespace: 'shop', name: 'data-db-extra', phase: 'Bound' },
    ],
    jobs: [
      {
        namespace: 'shop',
        name: 'backup',
        kind: 'CronJob',
        schedule: '0 * * * *',
        status: 'Scheduled',
      },
      {
        namespace: 'shop',
        name: 'backup-28000',
        kind: 'Job',
        status: 'Complete',
        owner_cronjob: 'backup',
      },
    ],
    hpas: [
      {
        namespace: 'shop',
        name: 'api',
        target: { kind: 'Deployment', name: 'api', api_version: 'apps/v1' },
        current_replicas: 2,
        desired_replicas: 3,
      },
    ],
    network_policies: [
      {
        namespace: 'shop',
        name: 'web-not-legacy',
        policy_types: ['Ingress'],
        pod_selector: {
          matchLabels: { app: 'api' },
          matchExpressions: [
            { key: 'tier', operator: 'In', values: ['web', 'edge'] },
            { key: 'legacy', operator: 'DoesNotExist' },
          ],
        },
      },
      {
        namespace: 'shop',
        name: 'not-api',
        policy_types: ['Ingress', 'Egress'],
        pod_selector: {
          matchExpressions: [
            { key: 'app', operator: 'NotIn', values: ['api'] },
            { key: 'app', operator: 'Exists' },
          ],
        },
      },
      {
        namespace: 'shop',
        name: 'default-deny',
        policy_types: ['Ingress'],
        pod_selector: {},
      },
    ],
    resource_quotas: [{ namespace: 'shop', name: 'compute' }],
    argocd_applications: [
      {
        namespace: 'argocd',
        name: 'shop',
        health_status: 'Healthy',
        sync_status: 'Synced',
        destination: {
          server: 'https://kubernetes.default.svc',
          namespace: 'shop',
        },
        resources: [
          { group: 'apps', kind: 'Deployment', namespace: 'shop', name: 'api' },
          { group: '', kind: 'Service', namespace: 'shop', name: 'api' },
          { group: '', kind: 'ConfigMap', namespace: 'shop', name: 'cfg' },
        ],
      },
    ],
  };
  if (olderAgent)
    delete (message as Partial<typeof message>).argocd_applications;
  return parseInventory(message);
}

interface Edge {
  from: string;
  to: string;
  relation: string;
  ready?: boolean;
  policy_types?: string[];
}

const edgeKeys = (edges: Edge[]) =>
  edges.map((e) => `${e.from} -${e.relation}-> ${e.to}`).sort();

describe('GET /api/v1/clusters/{clusterID}/graph', () => {
  let database: TestDatabase;
  let api: TestApi;
  let prod: Tenant;
  let staging: Tenant;
  let clusterId: string;
  let stagingClusterId: string;
  let hostId: string;
  let token: string;
  let siblingToken: string;

  const graph = (params: string, cluster = clusterId, as = token) =>
    api.get(`/api/v1/clusters/${cluster}/graph?${params}`, as);

  beforeAll(async () => {
    database = await createTestDatabase();
    const { db } = database;
    api = await startTestApi(db);
    prod = await createTenant(db, 'acme', 'production');
    staging = await createTenant(db, 'acme', 'staging');
    const host = await query<{ id: string }>(
      db,
      `insert into hosts (client_id, environment_id, hostname, os)
       values ($1, $2, 'NODE-A', 'Ubuntu 22.04') returning id`,
      [prod.clientId, prod.environmentId],
    );
    hostId = host[0]?.id as string;
    const subject = (tenant: Tenant, agentId: string) => ({
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      agentId,
    });
    const agent = randomUUID();
    clusterId = (
      await syncInventory(db, subject(prod, agent), inventoryOf(agent), {
        now: () => NOW,
      })
    ).clusterId;
    const stagingAgent = randomUUID();
    stagingClusterId = (
      await syncInventory(
        db,
        subject(staging, stagingAgent),
        inventoryOf(stagingAgent, { olderAgent: true }),
        { now: () => NOW },
      )
    ).clusterId;
    await insertGrant(db, {
      email: 'prod@example.test',
      role: 'viewer',
      clientId: prod.clientId,
      environmentId: prod.environmentId,
    });
    await insertGrant(db, {
      email: 'staging@example.test',
      role: 'viewer',
      clientId: prod.clientId,
      environmentId: staging.environmentId,
    });
    token = await api.token('prod@example.test');
    siblingToken = await api.token('staging@example.test');
  });
  afterAll(async () => {
    await api?.close();
    await database?.drop();
  });

  it('draws a pod one hop out: owner, node, services, slices and policies, with statuses and refs', async () => {
    // Act
    const response = await graph('kind=Pod&namespace=shop&name=api-1');

    // Assess
    expect(response.status, response.text).toBe(200);
    const data = response.body.data;
    expect(data.root).toBe('Pod/shop/api-1');
    expect(data.truncated).toBe(false);
    expect(data.notes).toEqual([]);
    expect(edgeKeys(data.edges)).toEqual(
      [
        'Deployment/shop/api -owns-> Pod/shop/api-1',
        'Pod/shop/api-1 -runs_on-> Node/node-a',
        'Service/shop/api -selects-> Pod/shop/api-1',
        'EndpointSlice/shop/api-abc -targets-> Pod/shop/api-1',
        'NetworkPolicy/shop/web-not-legacy -applies_to-> Pod/shop/api-1',
        'NetworkPolicy/shop/default-deny -applies_to-> Pod/shop/api-1',
      ].sort(),
    );
    const byId = new Map(
      data.nodes.map((n: { id: string }) => [n.id, n] as const),
    );
    expect(byId.get('Pod/shop/api-1')).toEqual({
      id: 'Pod/shop/api-1',
      kind: 'Pod',
      namespace: 'shop',
      name: 'api-1',
      status: 'Running',
    });
    const deployment = byId.get('Deployment/shop/api') as {
      status: string;
      ref: string;
    };
    expect(deployment.status).toBe('2/3');
    expect(deployment.ref).toMatch(
      new RegExp(`^/api/v1/clusters/${clusterId}/workloads/[0-9a-f-]{36}$`),
    );
    const workload = await api.get(deployment.ref, token);
    expect(workload.status).toBe(200);
    expect(byId.get('Node/node-a')).toMatchObject({
      status: 'Ready',
      namespace: null,
    });
    const targets = data.edges.find((e: Edge) => e.relation === 'targets');
    expect(targets.ready).toBe(true);
    const policy = data.edges.find(
      (e: Edge) => e.from === 'NetworkPolicy/shop/web-not-legacy',
    );
    expect(policy.policy_types).toEqual(['Ingress']);
  });

  it('applies matchExpressions with every operator and reads an empty selector as the whole namespace', async () => {
    // Act
    const webNotLegacy = await graph(
      'kind=NetworkPolicy&namespace=shop&name=web-not-legacy',
    );
    const notApi = await graph(
      'kind=NetworkPolicy&namespace=shop&name=not-api',
    );
    const deny = await graph(
      'kind=NetworkPolicy&namespace=shop&name=default-deny',
    );

    // Assess
    const pods = (body: { data: { edges: Edge[] } }) =>
      body.data.edges
        .filter((e) => e.relation === 'applies_to')
        .map((e) => e.to)
        .sort();
    // api-2 carries `legacy` (DoesNotExist fails); db-0 is not app=api.
    expect(pods(webNotLegacy.body)).toEqual(['Pod/shop/api-1']);
    // NotIn [api] and Exists app: db-0 only (the job's pod has no app label).
    expect(pods(notApi.body)).toEqual(['Pod/shop/db-0']);
    expect(pods(deny.body)).toEqual([
      'Pod/shop/api-1',
      'Pod/shop/api-2',
      'Pod/shop/backup-28000-x1',
      'Pod/shop/db-0',
    ]);
  });

  it('gives a Service without a selector no pods, and follows the ingresses routing to it', async () => {
    // Act
    const response = await graph(
      'kind=Service&namespace=shop&name=external-db',
    );

    // Assess
    expect(response.status).toBe(200);
    expect(edgeKeys(response.body.data.edges)).toEqual([
      'Ingress/shop/catch-all -routes_to-> Service/shop/external-db',
      'Ingress/shop/web -routes_to-> Service/shop/external-db',
    ]);
  });

  it("routes an ingress to its default backend's service, stored and listed as sent; a resource backend to nothing", async () => {
    // Act
    const catchAll = await graph('kind=Ingress&namespace=shop&name=catch-all');
    const bucket = await graph('kind=Ingress&namespace=shop&name=static');
    const listed = await api.get(
      `/api/v1/clusters/${clusterId}/ingresses?sort=name`,
      token,
    );

    // Assess
    expect(edgeKeys(catchAll.body.data.edges)).toEqual([
      'Ingress/shop/catch-all -routes_to-> Service/shop/external-db',
    ]);
    expect(bucket.body.data.edges).toEqual([]);
    expect(
      listed.body.data.map((i: { name: string; default_backend: unknown }) => [
        i.name,
        i.default_backend,
      ]),
    ).toEqual([
      ['catch-all', { service: 'external-db', port: 'pg' }],
      ['static', { service: null, port: null }],
      ['web', null],
    ]);
  });

  it("syncs an older agent's ingresses, which send no default backend, as having none", async () => {
    // Act
    const stored = await query<{ name: string; default_backend: unknown }>(
      database.db,
      `select name, default_backend from k8s_ingresses
       where cluster_id = $1 order by name`,
      [stagingClusterId],
    );
    const catchAll = await graph(
      'kind=Ingress&namespace=shop&name=catch-all',
      stagingClusterId,
      siblingToken,
    );

    // Assess
    expect(stored).toEqual([
      { name: 'catch-all', default_backend: null },
      { name: 'static', default_backend: null },
      { name: 'web', default_backend: null },
    ]);
    expect(catchAll.status).toBe(200);
    expect(catchAll.body.data.edges).toEqual([]);
  });

  it('draws no manages edge in a cluster without Argo CD applications, and every other one', async () => {
    // Act
    const here = await graph('kind=Service&namespace=shop&name=api');
    const there = await graph(
      'kind=Service&namespace=shop&name=api',
      stagingClusterId,
      siblingToken,
    );

    // Assess
    const keys = (r: typeof here) => edgeKeys(r.body.data.edges);
    expect(keys(here)).toContain(
      'Application/argocd/shop -manages-> Service/shop/api',
    );
    expect(keys(there)).toEqual(
      keys(here).filter((k) => !k.includes('-manages->')),
    );
  });

  it('routes an ingress to every rule path backend and, a hop further, to the selected pods', async () => {
    // Act
    const response = await graph(
      'kind=Ingress&namespace=shop&name=web&depth=2',
    );

    // Assess
    const keys = edgeKeys(response.body.data.edges);
    expect(keys).toContain('Ingress/shop/web -routes_to-> Service/shop/api');
    expect(keys).toContain(
      'Ingress/shop/web -routes_to-> Service/shop/external-db',
    );
    expect(keys).toContain('Service/shop/api -selects-> Pod/shop/api-2');
    expect(keys).toContain(
      'Service/shop/api -has_endpoints-> EndpointSlice/shop/api-abc',
    );
  });

  it("mounts a StatefulSet's template claims by ordinal, and a Deployment's named claim", async () => {
    // Act
    const db = await graph('kind=StatefulSet&namespace=shop&name=db');
    const claim = await graph(
      'kind=PersistentVolumeClaim&namespace=shop&name=data-db-1',
    );
    const uploads = await graph(
      'kind=PersistentVolumeClaim&namespace=shop&name=uploads',
    );

    // Assess
    expect(
      edgeKeys(db.body.data.edges).filter((k) => k.includes('mounts')),
    ).toEqual([
      'StatefulSet/shop/db -mounts-> PersistentVolumeClaim/shop/data-db-0',
      'StatefulSet/shop/db -mounts-> PersistentVolumeClaim/shop/data-db-1',
    ]);
    expect(edgeKeys(claim.body.data.edges)).toEqual([
      'StatefulSet/shop/db -mounts-> PersistentVolumeClaim/shop/data-db-1',
    ]);
    expect(claim.body.data.nodes[0].status).toBe('Pending');
    expect(edgeKeys(uploads.body.data.edges)).toEqual([
      'Deployment/shop/api -mounts-> PersistentVolumeClaim/shop/uploads',
    ]);
  });

  it('links a CronJob to its Job and the Job to its pod, and an HPA to its workload', async () => {
    // Act
    const cron = await graph('kind=CronJob&namespace=shop&name=backup&depth=2');
    const hpa = await graph(
      'kind=HorizontalPodAutoscaler&namespace=shop&name=api',
    );

    // Assess
    const keys = edgeKeys(cron.body.data.edges);
    expect(keys).toContain('CronJob/shop/backup -owns-> Job/shop/backup-28000');
    expect(keys).toContain(
      'Job/shop/backup-28000 -owns-> Pod/shop/backup-28000-x1',
    );
    expect(edgeKeys(hpa.body.data.edges)).toEqual([
      'HorizontalPodAutoscaler/shop/api -scales-> Deployment/shop/api',
    ]);
    expect(hpa.body.data.nodes[0].status).toBe('2/3');
  });

  it('reaches the CMDB host from a node, with its record route', async () => {
    // Act
    const response = await graph('kind=Node&name=node-a');

    // Assess
    const hostNode = response.body.data.nodes.find(
      (n: { kind: string }) => n.kind === 'Host',
    );
    expect(hostNode).toEqual({
      id: `Host/${hostId}`,
      kind: 'Host',
      namespace: null,
      name: 'NODE-A',
      status: null,
      ref: `/api/v1/hosts/${hostId}`,
    });
    expect(edgeKeys(response.body.data.edges)).toContain(
      `Node/node-a -is_host-> Host/${hostId}`,
    );
    expect(
      edgeKeys(response.body.data.edges).filter((k) => k.includes('runs_on')),
    ).toHaveLength(3);
  });

  it('walks on from a host (a tenant row, not a cluster one) back to its node, drawing the edge once', async () => {
    // Act: the second hop leaves from the host, among others.
    const response = await graph('kind=Node&name=node-a&depth=2');

    // Assess
    expect(response.status).toBe(200);
    expect(
      edgeKeys(response.body.data.edges).filter((k) => k.includes('is_host')),
    ).toEqual([`Node/node-a -is_host-> Host/${hostId}`]);
    expect(edgeKeys(response.body.data.edges)).toContain(
      'Deployment/shop/api -owns-> Pod/shop/api-1',
    );
  });

  it("draws an Argo CD application's resources in this cluster, and the application from them", async () => {
    // Act
    const app = await graph('kind=Application&namespace=argocd&name=shop');
    const service = await graph('kind=Service&namespace=shop&name=api');

    // Assess
    expect(app.body.data.nodes[0]).toMatchObject({ status: 'Healthy' });
    // The ConfigMap is not a kind the graph draws.
    expect(edgeKeys(app.body.data.edges)).toEqual([
      'Application/argocd/shop -manages-> Deployment/shop/api',
      'Application/argocd/shop -manages-> Service/shop/api',
    ]);
    expect(edgeKeys(service.body.data.edges)).toContain(
      'Application/argocd/shop -manages-> Service/shop/api',
    );
  });

  it('limits a namespace by its quota and contains its objects from the root', async () => {
    // Act
    const response = await graph('kind=Namespace&name=shop');

    // Assess
    const keys = edgeKeys(response.body.data.edges);
    expect(keys).toContain(
      'ResourceQuota/shop/compute -limits-> Namespace/shop',
    );
    expect(keys).toContain('Namespace/shop -contains-> Pod/shop/db-0');
    expect(keys).toContain('Namespace/shop -contains-> CronJob/shop/backup');
    expect(keys).not.toContain(
      'Namespace/shop -contains-> Application/argocd/shop',
    );
  });

  it('cuts a walk at the limit, nearest hops first, and says what it left out', async () => {
    // Act
    const response = await graph(
      'kind=Pod&namespace=shop&name=api-1&depth=2&limit=5',
    );

    // Assess
    const data = response.body.data;
    expect(data.truncated).toBe(true);
    expect(data.nodes).toHaveLength(5);
    expect(data.nodes[0].id).toBe('Pod/shop/api-1');
    // Every kept edge joins two kept nodes.
    const kept = new Set(data.nodes.map((n: { id: string }) => n.id));
    for (const edge of data.edges as Edge[]) {
      expect(kept.has(edge.from) && kept.has(edge.to)).toBe(true);
    }
    expect(data.notes.length).toBeGreaterThan(0);
    for (const note of data.notes) {
      expect(note).toMatch(
        /^[a-z_]+: \d+ more left out by the limit of 5 nodes$/,
      );
    }
    const full = await graph('kind=Pod&namespace=shop&name=api-1&depth=2');
    const leftOut = data.notes.reduce(
      (sum: number, note: string) => sum + Number(note.split(' ')[1]),
      0,
    );
    // A node left out by two relations is counted by each.
    expect(full.body.data.truncated).toBe(false);
    expect(full.body.data.nodes.length).toBeGreaterThan(5);
    expect(leftOut).toBeGreaterThanOrEqual(full.body.data.nodes.length - 5);
  });

  it('answers 404 for another environment’s cluster to a sibling-environment caller, before reading parameters', async () => {
    // Act
    const response = await graph('kind=Bogus', clusterId, siblingToken);
    const own = await graph(
      'kind=Pod&namespace=shop&name=api-1',
      stagingClusterId,
      siblingToken,
    );

    // Assess
    expect(response.status).toBe(404);
    expect(own.status).toBe(200);
  });

  it('answers 400 naming the bad parameter, and 404 naming the kind of an unknown object', async () => {
    // Act
    const cases = await Promise.all([
      graph('kind=Secret&namespace=shop&name=x'),
      graph('kind=Pod&name=api-1'),
      graph('kind=Node&namespace=shop&name=node-a'),
      graph('kind=Pod&namespace=shop&name=api-1&depth=4'),
      graph('kind=Pod&namespace=shop&name=api-1&limit=0'),
      graph('kind=Pod&namespace=shop&name=api-1&colour=red'),
      graph('kind=Pod&namespace=shop&name=Not_A_Name'),
    ]);
    const missing = await graph('kind=Pod&namespace=shop&name=nope');

    // Assess
    expect(cases.map((r) => [r.status, r.body.error.details.param])).toEqual([
      [400, 'kind'],
      [400, 'namespace'],
      [400, 'namespace'],
      [400, 'depth'],
      [400, 'limit'],
      [400, 'colour'],
      [400, 'name'],
    ]);
    expect(missing.status).toBe(404);
    expect(missing.body.error.message).toBe('Pod not found');
  });
});
