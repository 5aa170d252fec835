import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query } from '../../../shared/db/pool.ts';
import { keepEventHistoryPartitions } from '../../../shared/events/history.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import {
  type EventRow,
  type Inventory,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const DAY = 86_400_000;

let database: TestDatabase;
let tenant: Tenant;

beforeAll(async () => {
  database = await createTestDatabase();
  tenant = await createTenant(database.db);
});

afterAll(async () => {
  await database.drop();
});

function event(overrides: Partial<EventRow> & { name: string }): EventRow {
  return parseInventory({
    ...generateInventory({ seed: 1, agentId: randomUUID() }),
    events: [
      {
        namespace: 'shop',
        type: 'Warning',
        reason: 'BackOff',
        message: 'Back-off restarting failed container',
        involved_object: { kind: 'Pod', name: 'api-6f7d8-x2k4p' },
        count: 1,
        ...overrides,
      },
    ],
  }).events?.[0] as EventRow;
}

/** A snapshot at `at` of a fresh cluster carrying exactly `events`. */
function snapshot(agentId: string, at: Date, events: EventRow[]): Inventory {
  return parseInventory({
    ...generateInventory({ seed: 7, agentId, timestamp: at.toISOString() }),
    events,
  });
}

async function historyOf(clusterId: string) {
  return query<{ reason: string; count: number; message: string; id: string }>(
    database.db,
    `select reason, count, message, content_id as id from k8s_event_history
     where cluster_id = $1 order by seen_at, count`,
    [clusterId],
  );
}

async function sync(agentId: string, at: Date, events: EventRow[]) {
  return syncInventory(
    database.db,
    { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
    snapshot(agentId, at, events),
    { now: () => at },
  );
}

describe('event history written by the sync', () => {
  it('keeps one row for ten identical syncs and a second row for a count change', async () => {
    // Prepare
    const agentId = randomUUID();
    const start = new Date(Date.now() - 3_600_000);
    const seen = new Date(start.getTime() - 60_000).toISOString();
    const backOff = event({ name: 'api.1', last_seen: seen, count: 3 });

    // Act
    let result: Awaited<ReturnType<typeof sync>> | undefined;
    for (let i = 0; i < 10; i += 1) {
      result = await sync(agentId, new Date(start.getTime() + i * 1000), [
        backOff,
      ]);
    }
    const clusterId = result?.clusterId ?? '';
    const once = await historyOf(clusterId);
    const later = new Date(start.getTime() + 60_000);
    await sync(agentId, later, [
      { ...backOff, count: 4, last_seen: later.toISOString() },
    ]);
    const twice = await historyOf(clusterId);

    // Assess
    expect(once).toHaveLength(1);
    expect(once[0]?.id).toMatch(/^event:[0-9a-f]{16}$/);
    expect(twice.map((r) => r.count)).toEqual([3, 4]);
    expect(twice[0]?.id).not.toBe(twice[1]?.id);
  });

  it('copies an event up to the history window old into a fresh database, and none older', async () => {
    // Prepare
    const agentId = randomUUID();
    const now = new Date();
    const days = (n: number) => new Date(now.getTime() - n * DAY).toISOString();

    // Act
    const { clusterId } = await sync(agentId, now, [
      event({ name: 'a', reason: 'Thirteen', last_seen: days(13.9) }),
      event({ name: 'b', reason: 'Two', last_seen: days(2) }),
      event({ name: 'c', reason: 'Fifteen', last_seen: days(15) }),
    ]);

    // Assess: the 24-hour table keeps none of these three; the history two.
    const reasons = (await historyOf(clusterId)).map((r) => r.reason);
    expect(reasons).toEqual(['Thirteen', 'Two']);
  });

  it('does not copy an event without a last-seen time', async () => {
    // Prepare
    const agentId = randomUUID();
    const now = new Date();

    // Act
    const { clusterId } = await sync(agentId, now, [
      event({ name: 'fs', reason: 'FailedScheduling', last_seen: null }),
      event({ name: 'ok', reason: 'Scheduled', last_seen: now.toISOString() }),
    ]);

    // Assess
    expect((await historyOf(clusterId)).map((r) => r.reason)).toEqual([
      'Scheduled',
    ]);
  });

  it('stores messages secret-sanitized', async () => {
    // Prepare
    const agentId = randomUUID();
    const now = new Date();

    // Act
    const { clusterId } = await sync(agentId, now, [
      event({
        name: 'probe',
        reason: 'Unhealthy',
        message:
          'Liveness probe failed: curl -H "Authorization: Bearer s3cr3t.t0ken"',
        last_seen: now.toISOString(),
      }),
    ]);

    // Assess
    const [row] = await historyOf(clusterId);
    expect(row?.message).not.toContain('s3cr3t');
    expect(row?.message).toContain('[REDACTED]');
  });

  it('writes nothing to the history on a no-change resync', async () => {
    // Prepare
    const agentId = randomUUID();
    const at = new Date();
    const events = [event({ name: 'x', last_seen: at.toISOString() })];
    const { clusterId } = await sync(agentId, at, events);
    const before = await query<{ xmin: string }>(
      database.db,
      'select xmin::text from k8s_event_history where cluster_id = $1',
      [clusterId],
    );

    // Act
    await sync(agentId, new Date(at.getTime() + 1000), events);

    // Assess
    const after = await query<{ xmin: string }>(
      database.db,
      'select xmin::text from k8s_event_history where cluster_id = $1',
      [clusterId],
    );
    expect(after).toEqual(before);
  });
});

describe('keepEventHistoryPartitions', () => {
  async function partitions(): Promise<string[]> {
    const rows = await query<{ name: string }>(
      database.db,
      `select c.relname as name from pg_inherits i
       join pg_class c on c.oid = i.inhrelid
       where i.inhparent = 'k8s_event_history'::regclass order by 1`,
    );
    return rows.map((r) => r.name);
  }

  it('makes a partition for every day of the window and three days ahead, and drops whole days past it', async () => {
    // Prepare: a sweep forty days from now, keeping 14 days.
    const later = new Date(Date.now() + 40 * DAY);
    const day = (offset: number) =>
      `k8s_event_history_p${new Date(later.getTime() + offset * DAY)
        .toISOString()
        .slice(0, 10)
        .replaceAll('-', '')}`;

    // Act
    const first = await keepEventHistoryPartitions(database.db, 14, later);
    const again = await keepEventHistoryPartitions(database.db, 14, later);
    const names = await partitions();

    // Assess
    expect(first.made).toBe(18);
    expect(first.dropped).toBeGreaterThan(0);
    expect(again).toEqual({ made: 0, dropped: 0 });
    expect(names[0]).toBe(day(-14));
    expect(names.at(-1)).toBe(day(3));
    expect(names).toHaveLength(18);
  });
});
