/**
 * What a no-change resync costs that does not grow with its rows: the
 * statements it runs, each a round trip (docs/sync.md, "A no-change
 * resync"). Pinned here so a step that starts running on every resync is
 * seen.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { syncInventory } from '../../../shared/sync/sync.ts';
import type { Inventory } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');
const at = (n: number) => new Date(T0 + n * 300_000).toISOString();

/** A statement's first words, enough to tell the sync's apart. */
function firstWords(text: string): string {
  return text.trim().replace(/\s+/g, ' ').split(' ').slice(0, 3).join(' ');
}

describe('a no-change resync', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  /** The statements run on the pool's clients while set. */
  let statements: string[] | undefined;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    const wrapped = new WeakSet<pg.PoolClient>();
    database.db.on('acquire', (client) => {
      if (wrapped.has(client)) return;
      wrapped.add(client);
      const run = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (...args: unknown[]) => {
        const [sql] = args as [string | { text: string }];
        statements?.push(firstWords(typeof sql === 'string' ? sql : sql.text));
        return run(...args);
      };
    });
  });
  afterAll(() => database.drop());

  it('runs five statements whatever its size', async () => {
    const counts: number[] = [];
    for (const size of ['small', 'medium'] as const) {
      const agentId = randomUUID();
      const inventory = generateInventory({
        size,
        seed: 1,
        agentId,
        timestamp: at(0),
      }) as Inventory;
      const subject = {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        agentId,
      };
      const sync = (n: number) =>
        syncInventory(
          database.db,
          subject,
          { ...inventory, timestamp: at(n) },
          { now: () => new Date(Date.parse(at(n)) + 1000) },
        );
      await sync(0);
      statements = [];
      const result = await sync(1);
      const run = statements;
      statements = undefined;
      expect(result.outcome).toBe('applied');
      expect(Object.values(result.kinds).every((k) => k.upserted === 0)).toBe(
        true,
      );
      expect(run).toEqual([
        // BEGIN and the transaction's settings, one simple query.
        "BEGIN; SELECT set_config('work_mem',",
        // Steps 1-2: the tenant and the cluster's lock.
        'with tenant as',
        // The stored digests of the kinds whose kind digest differs: the
        // events, which keep none (digests.ts).
        "select 'events' as",
        // Steps 1-2 end: the cluster's and its asset's fields, with step
        // 3's host linkage of the nodes, none written.
        'with ips as',
        'COMMIT',
      ]);
      counts.push(run.length);
    }
    expect(counts).toEqual([5, 5]);
  });
});
