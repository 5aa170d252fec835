/**
 * The lists' `labels` filter against PostgreSQL: key=value, a key alone,
 * several terms, refusals naming the bad term, narrowed by q, and the GIN
 * indexes serving it on a large cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Queryable, query } from '../../../shared/db/pool.ts';
import { readRouteQuery } from '../../../shared/http/query.ts';
import {
  buildListQuery,
  listQuery,
  parseListQuery,
} from '../../../shared/inventory/list.ts';
import {
  LISTS,
  listJobs,
  listPods,
  listServices,
  listWorkloads,
} from '../../../shared/inventory/lists.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRows } from './seed.ts';

describe('the labels filter', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;
  let otherClusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    const tenant = await createTenant(db);
    clusterId = await createCluster(db, tenant);
    otherClusterId = await createCluster(db, tenant);
    await insertRows(db, 'k8s_pods', clusterId, [
      { namespace: 'shop', name: 'api-1', labels: { app: 'api', tier: 'web' } },
      { namespace: 'shop', name: 'api-2', labels: { app: 'api' } },
      { namespace: 'shop', name: 'db-0', labels: { app: 'db', tier: 'data' } },
      {
        namespace: 'ops',
        name: 'agent-x',
        labels: { 'app.kubernetes.io/name': 'agent', tier: '' },
      },
      { namespace: 'ops', name: 'bare', labels: {} },
    ]);
    await insertRows(db, 'k8s_pods', otherClusterId, [
      { namespace: 'shop', name: 'api-1', labels: { app: 'api' } },
    ]);
    await insertRows(db, 'k8s_workloads', clusterId, [
      {
        namespace: 'shop',
        name: 'api',
        kind: 'Deployment',
        labels: { app: 'api' },
      },
      {
        namespace: 'shop',
        name: 'db',
        kind: 'StatefulSet',
        labels: { app: 'db' },
      },
    ]);
    await insertRows(db, 'k8s_jobs', clusterId, [
      {
        namespace: 'ops',
        name: 'backup',
        kind: 'CronJob',
        labels: { team: 'sre' },
      },
      { namespace: 'ops', name: 'migrate', kind: 'Job', labels: {} },
    ]);
  });
  afterAll(async () => {
    await database?.drop();
  });

  const names = (page: { data: { parse(): { name: string }[] } }) =>
    page.data.parse().map((row) => row.name);

  it('keeps the rows whose label holds the value, in this cluster only', async () => {
    // Act
    const page = await listPods(db, clusterId, { labels: 'app=api' });

    // Assess
    expect(names(page)).toEqual(['api-1', 'api-2']);
    expect(page.meta.total).toBe(2);
  });

  it('keeps the rows that have a label, whatever its value, for a key alone', async () => {
    // Act
    const tier = await listPods(db, clusterId, { labels: 'tier' });
    const prefixed = await listPods(db, clusterId, {
      labels: 'app.kubernetes.io/name',
    });

    // Assess: an empty value still has the label.
    expect(names(tier)).toEqual(['agent-x', 'api-1', 'db-0']);
    expect(names(prefixed)).toEqual(['agent-x']);
  });

  it('requires every term of several', async () => {
    // Act
    const both = await listPods(db, clusterId, { labels: 'app=api,tier=web' });
    const valueAndKey = await listPods(db, clusterId, {
      labels: 'app=db,tier',
    });
    const emptyValue = await listPods(db, clusterId, { labels: 'tier=' });

    // Assess
    expect(names(both)).toEqual(['api-1']);
    expect(names(valueAndKey)).toEqual(['db-0']);
    expect(names(emptyValue)).toEqual(['agent-x']);
  });

  it('is narrowed by q and the other filters, never widened', async () => {
    // Act
    const searched = await listPods(db, clusterId, {
      labels: 'tier',
      q: 'api',
    });
    const inNamespace = await listPods(db, clusterId, {
      labels: 'tier',
      namespace: 'ops',
    });

    // Assess
    expect(names(searched)).toEqual(['api-1']);
    expect(names(inNamespace)).toEqual(['agent-x']);
  });

  it('filters workloads and jobs too', async () => {
    // Act
    const workloads = await listWorkloads(db, clusterId, { labels: 'app=db' });
    const jobs = await listJobs(db, clusterId, { labels: 'team=sre' });

    // Assess
    expect(names(workloads)).toEqual(['db']);
    expect(names(jobs)).toEqual(['backup']);
  });

  it('takes an empty labels as no filter', async () => {
    // Act
    const page = await listPods(db, clusterId, { labels: '' });

    // Assess
    expect(page.meta.total).toBe(5);
  });

  it.each([
    ['a key with a space', 'app name=api', 'term 1 has no label key'],
    ['a key ending in a dash', 'app-=api', 'term 1 has no label key'],
    ['an empty term', 'app=api,,tier', 'term 2 has no label key'],
    ['a bad prefix', 'Example.com/app=api', 'term 1 has no label key'],
    [
      'a name over 63 characters',
      `${'a'.repeat(64)}=x`,
      'term 1 has no label key',
    ],
    ['a value with a slash', 'app=a/b', 'term 1 has no label value'],
    [
      'a value over 63 characters',
      `app=${'v'.repeat(64)}`,
      'term 1 has no label value',
    ],
    ['a key named twice', 'app=api,app=db', 'term 2 repeats a key'],
  ])(
    'refuses %s as 400 bad_request naming the term, not its text',
    async (_, labels, named) => {
      // Act & Assess
      await expect(listPods(db, clusterId, { labels })).rejects.toMatchObject({
        status: 400,
        code: 'bad_request',
        details: { param: 'labels' },
        message: `labels: ${named}${named.endsWith('has no label key') ? ' ([prefix/]name, the name at most 63 letters, digits, -, _ or .)' : named.endsWith('value') ? ' (at most 63 letters, digits, -, _ or .)' : ''}`,
      });
    },
  );

  it('is read from the query string of the routes that take it', () => {
    // Act
    const pods = readRouteQuery(
      'labels=app%3Dapi%2Ctier',
      listQuery(LISTS.pods),
    );

    // Assess
    expect(pods.labels).toEqual({ equals: { app: 'api' }, present: ['tier'] });
    expect(() =>
      readRouteQuery('labels=app%3Dapi', listQuery(LISTS.services)),
    ).toThrow('unknown query parameter labels');
  });

  it('is not a parameter of a list whose records carry no labels', async () => {
    // Act: the domain function ignores it; the route refuses it (isolation test).
    const page = await listServices(db, clusterId, { labels: 'app=api' });

    // Assess
    expect(page.meta.total).toBe(0);
    expect(
      parseListQuery(LISTS.services, { labels: 'app=api' }),
    ).not.toHaveProperty('labels.equals');
  });
});

describe('the labels filter on a large cluster', () => {
  let database: TestDatabase;
  let db: Queryable;
  let clusterId: string;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
    clusterId = await createCluster(db, await createTenant(db));
    // 5,000 pods and 2,000 workloads, set-based: 500 apps, each pod with the
    // two containers and labels a Deployment's pod has (rows of a real
    // cluster's width, so the planner weighs a scan as it would there).
    const containers = `jsonb_build_array(
        jsonb_build_object('name', 'app', 'image', 'registry.example.com/team/app-' || (i % 500) || ':1.2.3',
          'ready', true, 'restart_count', 0, 'state', 'running',
          'volume_refs', jsonb_build_array('configmap:app-' || (i % 500), 'secret:app-' || (i % 500) || '-tls'),
          'requests', jsonb_build_object('cpu', '100m', 'memory', '128Mi'),
          'limits', jsonb_build_object('cpu', '500m', 'memory', '512Mi')),
        jsonb_build_object('name', 'istio-proxy', 'image', 'docker.io/istio/proxyv2:1.20.3',
          'ready', true, 'restart_count', 0, 'state', 'running',
          'requests', jsonb_build_object('cpu', '10m', 'memory', '40Mi')))`;
    const labels = `jsonb_build_object('app', 'app-' || (i % 500),
        'pod-template-hash', substr(md5((i % 500)::text), 1, 10))`;
    await query(
      db,
      `insert into k8s_pods (cluster_id, namespace, name, phase, labels, containers, content_hash)
       select $1, 'ns-' || (i % 20), 'pod-' || i, 'Running', ${labels}, ${containers}, 'test'
       from generate_series(1, 5000) i`,
      [clusterId],
    );
    await query(
      db,
      `insert into k8s_workloads (cluster_id, namespace, name, kind, labels, containers, content_hash)
       select $1, 'ns-' || (i % 20), 'wl-' || i, 'Deployment', ${labels}, ${containers}, 'test'
       from generate_series(1, 2000) i`,
      [clusterId],
    );
    await query(db, 'analyze k8s_pods, k8s_workloads');
  }, 60_000);
  afterAll(async () => {
    await database?.drop();
  });

  async function plan(list: 'pods' | 'workloads', labels: string) {
    const definition = LISTS[list];
    const statement = buildListQuery(
      definition,
      clusterId,
      parseListQuery(definition, { labels }),
    );
    const rows = await query<{ 'QUERY PLAN': unknown }>(
      db,
      `explain (format json) ${statement.text}`,
      statement.values,
    );
    return JSON.stringify(rows[0]?.['QUERY PLAN']);
  }

  it.each([
    ['pods', 'app=app-7', 'idx_k8s_pods_labels'],
    ['pods', 'app=app-7,pod-template-hash', 'idx_k8s_pods_labels'],
    ['workloads', 'app=app-7', 'idx_k8s_workloads_labels'],
  ] as const)('reads %s labels=%s through %s', async (list, labels, index) => {
    // Act
    const explained = await plan(list, labels);

    // Assess
    expect(explained).toContain(`"Index Name":"${index}"`);
  });

  it('returns the matching pods of the large cluster', async () => {
    // Act
    const page = await listPods(db, clusterId, { labels: 'app=app-7' });

    // Assess
    expect(page.meta.total).toBe(10);
  });
});
