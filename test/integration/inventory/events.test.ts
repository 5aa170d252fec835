import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Queryable, query } from '../../../shared/db/pool.ts';
import { listEvents } from '../../../shared/inventory/lists.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createCluster, createTenant, insertRows } from './seed.ts';

const HOUR = 3_600_000;

describe('listEvents', () => {
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
    const [{ now }] = (await query<{ now: Date }>(db, 'select now()')) as [
      { now: Date },
    ];
    const ago = (hours: number) => new Date(now.getTime() - hours * HOUR);
    await insertRows(db, 'k8s_events', clusterId, [
      {
        namespace: 'shop',
        name: 'web.1',
        type: 'Normal',
        reason: 'Scheduled',
        message: 'Successfully assigned shop/web-1 to node-a',
        last_seen: ago(3),
      },
      {
        namespace: 'shop',
        name: 'web.2',
        type: 'Warning',
        reason: 'Unhealthy',
        message:
          'Liveness probe failed: curl -H "Authorization: Bearer s3cr3t-value" http://web',
        last_seen: ago(1),
      },
      {
        namespace: 'shop',
        name: 'web.3',
        type: 'Warning',
        reason: 'Failed',
        message: 'exec: app --password hunter2 failed',
        last_seen: ago(2),
      },
      {
        namespace: 'shop',
        name: 'stale',
        type: 'Warning',
        message: 'older than a day',
        last_seen: ago(25),
      },
      // Reported with no last-seen time (an agent older than v0.8.0): its
      // time is the first-seen time, else the creation time, else when the
      // backend wrote it (now, for this one).
      { namespace: 'shop', name: 'no-time', type: 'Warning', last_seen: null },
      {
        namespace: 'shop',
        name: 'first-seen',
        type: 'Normal',
        last_seen: null,
        first_seen: ago(0.5),
      },
      {
        namespace: 'shop',
        name: 'created-long-ago',
        type: 'Normal',
        last_seen: null,
        created_at: ago(30),
      },
    ]);
    await insertRows(db, 'k8s_events', otherClusterId, [
      { namespace: 'shop', name: 'other', type: 'Warning', last_seen: ago(1) },
    ]);
  });
  afterAll(async () => {
    await database.drop();
  });

  it('lists the last 24 hours of the cluster, newest first, events with no last-seen time too', async () => {
    // Act
    const result = await listEvents(db, clusterId, {});

    // Assess
    expect(result.data.parse().map((e) => [e.name, e.last_seen])).toEqual([
      ['no-time', null],
      ['first-seen', null],
      ['web.2', expect.any(String)],
      ['web.3', expect.any(String)],
      ['web.1', expect.any(String)],
    ]);
    expect(result.meta).toEqual({ total: 5, page: 1, per_page: 50 });
  });

  it('filters by type', async () => {
    // Act
    const result = await listEvents(db, clusterId, { type: 'Warning' });

    // Assess
    expect(result.data.parse().map((e) => e.name)).toEqual([
      'no-time',
      'web.2',
      'web.3',
    ]);
  });

  it('refuses an unknown type as bad_request', async () => {
    // Act & Assess
    await expect(
      listEvents(db, clusterId, { type: 'Error' }),
    ).rejects.toMatchObject({
      code: 'bad_request',
      details: { param: 'type' },
    });
  });

  it('secret-sanitizes every message', async () => {
    // Act
    const result = await listEvents(db, clusterId, { type: 'Warning' });

    // Assess
    const messages = result.data
      .parse()
      .map((e) => e.message)
      .join('\n');
    expect(messages).not.toContain('s3cr3t-value');
    expect(messages).not.toContain('hunter2');
    expect(messages).toContain('[REDACTED]');
    expect(messages).toContain('Liveness probe failed');
  });

  it('pages', async () => {
    // Act
    const first = await listEvents(db, clusterId, { per_page: '2' });
    const second = await listEvents(db, clusterId, {
      per_page: '2',
      page: '2',
    });

    // Assess
    expect(first.data.parse().map((e) => e.name)).toEqual([
      'no-time',
      'first-seen',
    ]);
    expect(second.data.parse().map((e) => e.name)).toEqual(['web.2', 'web.3']);
    expect(second.meta).toEqual({ total: 5, page: 2, per_page: 2 });
  });
});
