import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { expireChanges } from '../../../shared/sweeps/change-retention.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const NOW = new Date('2026-10-01T12:00:00Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * 86_400_000);

describe('change retention', () => {
  let database: TestDatabase;
  let tenants: Tenant[];

  beforeAll(async () => {
    database = await createTestDatabase();
    tenants = [
      await createTenant(database.db),
      await createTenant(database.db),
    ];
  });
  afterAll(() => database.drop());

  it('deletes change rows and alert groups past retention, in batches, and keeps the rest', async () => {
    // Prepare: per client 7 old rows (observed 91 days ago, or recorded
    // then with no observed time) and 2 recent ones; alert groups alike.
    for (const t of tenants) {
      await query(
        database.db,
        `insert into change_events (source, event_type, client_id, environment_id,
           scanned_at, created_at, summary)
         select 'k8s-config', 'workload_changed', $1::uuid, $2::uuid,
                case when i % 2 = 0 then $3::timestamptz end, $3::timestamptz, 'old'
         from generate_series(1, 7) i
         union all
         select 'deployment', 'sync', $1::uuid, null, $4::timestamptz, $3::timestamptz, 'recent'
         from generate_series(1, 2)`,
        [t.clientId, t.environmentId, daysAgo(91), daysAgo(89)],
      );
      const source = await queryOne<{ id: string }>(
        database.db,
        `insert into webhook_sources (client_id, kind, secret_sha256)
         values ($1, 'alertmanager', sha256('s')) returning id`,
        [t.clientId],
      );
      await query(
        database.db,
        `insert into alert_groups (source_id, client_id, group_key, status, title,
           first_fired_at, last_notified_at, updated_at)
         select $1::uuid, $2::uuid, 'g' || i, 'resolved', 'A', $3::timestamptz,
                $3::timestamptz, case when i <= 3 then $3::timestamptz else $4::timestamptz end
         from generate_series(1, 5) i`,
        [source.id, t.clientId, daysAgo(120), daysAgo(10)],
      );
    }

    // Act
    const first = await expireChanges(database.db, {
      retentionDays: 90,
      now: NOW,
      batchSize: 3,
    });
    const second = await expireChanges(database.db, {
      retentionDays: 90,
      now: NOW,
      batchSize: 3,
    });

    // Assess
    expect(first).toEqual({ changes: 14, alertGroups: 6, batches: 9 });
    expect(second).toEqual({ changes: 0, alertGroups: 0, batches: 1 });
    const left = await query<{ summary: string; n: number }>(
      database.db,
      `select summary, count(*)::int as n from change_events group by summary`,
    );
    expect(left).toEqual([{ summary: 'recent', n: 4 }]);
    const groups = await queryOne<{ n: number }>(
      database.db,
      'select count(*)::int as n from alert_groups',
    );
    expect(groups.n).toBe(4);
  });
});
