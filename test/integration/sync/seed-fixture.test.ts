/**
 * The demo seed's built-in fixture, rebased to the seeding time, reads as a
 * newcomer expects on a first `npm run seed`: its events in the 24-hour
 * list, and no pod pending for years.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listEvents, listPods } from '../../../shared/inventory/lists.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { parseInventory } from '../../../shared/wire/inventory.ts';
import {
  REALISTIC_TIMESTAMP,
  realisticInventoryMessage,
  realisticInventoryMessageAt,
  SEED_WINDOW_MS,
} from '../../fixtures/realistic.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

describe('the seed fixture rebased to the seeding time', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  async function seed(message: unknown) {
    const agentId = randomUUID();
    const inventory = parseInventory({
      ...(message as object),
      agent_id: agentId,
    });
    const result = await syncInventory(
      database.db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      inventory,
    );
    return { inventory, clusterId: result.clusterId };
  }

  it('lists every event of the fixture in the 24-hour list', async () => {
    // Prepare
    const now = new Date();
    const message = realisticInventoryMessageAt(now);

    // Act
    const { inventory, clusterId } = await seed(message);
    const events = await listEvents(database.db, clusterId, {});

    // Assert
    expect(inventory.timestamp).toBe(now.toISOString());
    expect(events.meta.total).toBe(inventory.events?.length);
    expect(events.meta.total).toBeGreaterThan(0);
  });

  it('shows no pod pending, and no object created, before the window', async () => {
    // Prepare
    const now = new Date();

    // Act
    const { clusterId } = await seed(realisticInventoryMessageAt(now));
    const pods = (
      await listPods(database.db, clusterId, { per_page: '100' })
    ).data.parse();

    // Assert
    const oldest = now.getTime() - SEED_WINDOW_MS;
    const pending = pods.filter((p) => p.phase === 'Pending');
    expect(pending.length).toBeGreaterThan(0);
    for (const pod of pods) {
      for (const time of [pod.pending_since, pod.created_at, pod.started_at]) {
        if (time !== null) {
          expect(Date.parse(time)).toBeGreaterThanOrEqual(oldest);
          expect(Date.parse(time)).toBeLessThanOrEqual(now.getTime());
        }
      }
    }
  });

  it('keeps the order of the fixture’s times', () => {
    // Prepare
    const original = realisticInventoryMessage();

    // Act
    const rebased = realisticInventoryMessageAt(new Date());

    // Assert: pod by pod, creation before start, and pods in the same order.
    const times = (m: typeof original) =>
      (m.pods ?? []).map((p) => Date.parse(p.created_at ?? ''));
    const before = times(original);
    const after = times(rebased);
    for (let i = 1; i < before.length; i++) {
      expect(Math.sign((after[i] ?? 0) - (after[i - 1] ?? 0))).toBe(
        Math.sign((before[i] ?? 0) - (before[i - 1] ?? 0)),
      );
    }
    expect(original.timestamp).toBe(REALISTIC_TIMESTAMP);
  });
});
