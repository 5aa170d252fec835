/**
 * Fuzzing the wire schema and the sync behind it: arbitrary JSON, and valid
 * inventories with one value deleted or replaced by a hostile one (deep
 * nesting, huge strings, NUL, lone surrogates, wrong types). Each message
 * is either refused with a RejectedInventoryError whose reason names a
 * field, and then writes nothing, or accepted and applied whole by the real
 * sync against PostgreSQL. Never another error, a crash or a partial write.
 *
 * The sync worker validates only the rows its stored digests do not know
 * (issue #15): every case also goes that way, as a first sync (every row
 * new) and as a resync after the unaltered inventory was applied (every
 * row but the altered one known), and must be refused exactly when the
 * whole schema refuses it, with the same reason, writing nothing.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryOne } from '../../../shared/db/pool.ts';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import { decodeInventoryJson } from '../../../shared/wire/decode.ts';
import { parseInventoryJson } from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import {
  type JsonPath,
  jsonPaths,
  withValueAt,
} from '../../helpers/json-paths.ts';

const SEED = Number(process.env.FUZZ_SEED ?? 20261201);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const NOW = new Date('2026-06-15T12:30:00Z');

/**
 * An object `depth` levels deep, as JSON text: the test cannot build it as
 * a value and stringify it (JSON.stringify recurses), and an agent's bytes
 * are text anyway.
 */
const DEEP_MARK = '"__deep__"';
function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}"leaf"${'}'.repeat(depth)}`;
}

/** Values too big to print stand for themselves by name (see `build`). */
const BIG = {
  'a 1 MB string': () => 'a'.repeat(1_000_000),
  'an array of 20,000 numbers': () => Array(20_000).fill(1),
  'an object 30 deep': () => ({ deep: 30 }),
  'an object 5,000 deep': () => ({ deep: 5_000 }),
} as const;

const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    null,
    '',
    'ab\u0000cd',
    'shop-\ud800',
    -1,
    1e308,
    1.5,
    '2026-02-30T00:00:00Z',
    'not a time',
    [],
    {},
  ),
  fc
    .constantFrom(...(Object.keys(BIG) as (keyof typeof BIG)[]))
    .map((name) => ({ big: name })),
);

function build(value: unknown): unknown {
  const big = (value as { big?: keyof typeof BIG } | null)?.big;
  return big !== undefined && big in BIG ? BIG[big]() : value;
}

/** The message's JSON, each `{ deep: n }` spliced in as n levels of text. */
function toJson(inventory: unknown): string {
  let depth = 0;
  const json = JSON.stringify(inventory, (_, v) => {
    if (v !== null && typeof v === 'object' && 'deep' in v) {
      depth = (v as { deep: number }).deep;
      return JSON.parse(DEEP_MARK);
    }
    return v;
  });
  return depth === 0 ? json : json.replace(DEEP_MARK, deepJson(depth));
}

describe('fuzzing the wire schema and the sync', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(async () => {
    await database?.drop();
  });

  const clusterRows = async (agentId: string) =>
    queryOne<{ n: number }>(
      database.db,
      `select (select count(*)::int from clusters where agent_id = $1)
            + (select count(*)::int from k8s_pods p join clusters c
                 on c.id = p.cluster_id where c.agent_id = $1) as n`,
      [agentId],
    ).then((row) => row.n);

  /** What a cluster holds, to tell that a refusal changed nothing. */
  const clusterState = async (agentId: string) =>
    queryOne<{ state: string | null }>(
      database.db,
      `select c.last_snapshot_at::text || ':' || coalesce((
         select string_agg(t.content_hash, ',' order by t.content_hash) from (
           select content_hash from k8s_pods where cluster_id = c.id
           union all select content_hash || coalesce(spec_facts_wire_hash, '')
             from k8s_workloads where cluster_id = c.id
           union all select content_hash from k8s_nodes where cluster_id = c.id
           union all select content_hash from k8s_events where cluster_id = c.id
           union all select content_hash from k8s_network_policies
             where cluster_id = c.id) t), '') as state
       from clusters c where c.agent_id = $1`,
      [agentId],
    ).catch(() => ({ state: null }));

  const subjectOf = (agentId: string) => ({
    clientSlug: tenant.clientSlug,
    envSlug: tenant.envSlug,
    agentId,
  });

  /** The reason the sync worker's path refuses `json` with, if it does. */
  async function selectiveRefusal(json: string): Promise<string | undefined> {
    try {
      const wire = decodeInventoryJson(json);
      await syncInventory(database.db, subjectOf(wire.agent_id), wire, {
        now: () => NOW,
      });
      return undefined;
    } catch (error) {
      expect(error).toBeInstanceOf(RejectedInventoryError);
      return (error as RejectedInventoryError).reason;
    }
  }

  /**
   * The sync worker's path agrees with the whole schema: as a first sync,
   * and (given `base`, the unaltered message a minute earlier) as a resync.
   * A refusal leaves the cluster as it was.
   */
  async function sameVerdict(
    json: string,
    refusedBy: string | undefined,
    base: string | undefined,
  ) {
    if (refusedBy === undefined) return;
    expect(await selectiveRefusal(json)).toBe(refusedBy);
    if (base === undefined) return;
    const agentId = decodeInventoryJson(base).agent_id;
    await syncInventory(
      database.db,
      subjectOf(agentId),
      decodeInventoryJson(base),
      { now: () => NOW },
    );
    const before = await clusterState(agentId);
    expect(await selectiveRefusal(json)).toBe(refusedBy);
    expect(await clusterState(agentId)).toEqual(before);
  }

  /** Refused with a reason naming a field, or applied whole. */
  async function refusedOrApplied(
    json: string,
    agentId: string,
    base?: string,
  ) {
    let inventory: ReturnType<typeof parseInventoryJson>;
    try {
      inventory = parseInventoryJson(json);
    } catch (error) {
      expect(error).toBeInstanceOf(RejectedInventoryError);
      const reason = (error as RejectedInventoryError).reason;
      expect(reason.length).toBeLessThanOrEqual(300);
      expect(reason).not.toContain('a'.repeat(100));
      expect(await clusterRows(agentId)).toBe(0);
      await sameVerdict(json, reason, base);
      return 'refused';
    }
    const subject = {
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      agentId: inventory.agent_id,
    };
    try {
      await syncInventory(database.db, subject, inventory, { now: () => NOW });
    } catch (error) {
      // The sync may refuse what only the database can judge, but whole.
      expect(error).toBeInstanceOf(RejectedInventoryError);
      expect(await clusterRows(inventory.agent_id)).toBe(0);
      return 'refused';
    }
    // Accepted by the whole schema: the sync worker's path accepts it too,
    // as a first sync and as a resync, each on a cluster of its own.
    const agent = inventory.agent_id;
    expect(await selectiveRefusal(json.replaceAll(agent, randomUUID()))).toBe(
      undefined,
    );
    if (base !== undefined) {
      const other = randomUUID();
      expect(await selectiveRefusal(base.replaceAll(agentId, other))).toBe(
        undefined,
      );
      expect(await selectiveRefusal(json.replaceAll(agent, other))).toBe(
        undefined,
      );
    }
    const pods = await queryOne<{ n: number }>(
      database.db,
      `select count(*)::int as n from k8s_pods p join clusters c
         on c.id = p.cluster_id where c.agent_id = $1`,
      [inventory.agent_id],
    );
    // Every pod, its namespace listed or not: one that is not yet (created
    // between the agent's two lists) is stored unlinked, its link repaired
    // when the namespace arrives.
    expect(pods.n).toBe((inventory.pods ?? []).length);
    return 'applied';
  }

  it('refuses arbitrary JSON with a reason, or applies it whole', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue(), async (value) => {
        await refusedOrApplied(JSON.stringify(value), randomUUID());
      }),
      { numRuns: RUNS * 3, seed: SEED },
    );
  });

  it('refuses a valid inventory with one value deleted or made hostile, or applies it whole', async () => {
    const outcomes = { refused: 0, applied: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 1_000 }),
        fc.nat(),
        hostile,
        fc.boolean(),
        async (seed, pick, value, remove) => {
          // Prepare
          const agentId = randomUUID();
          const inventory = generateInventory({
            size: 'small',
            seed,
            agentId,
            timestamp: '2026-06-15T12:00:00Z',
          });
          const all = jsonPaths(inventory).filter((p) => p.length > 0);
          const path = all[pick % all.length] as JsonPath;
          const mutated = withValueAt(inventory, path, build(value), remove);
          // The unaltered message a minute earlier: a resync's stored rows.
          const base = toJson({
            ...inventory,
            timestamp: '2026-06-15T11:59:00Z',
          });

          // Act & Assess
          outcomes[await refusedOrApplied(toJson(mutated), agentId, base)]++;
        },
      ),
      { numRuns: RUNS, seed: SEED },
    );
    // Both sides were exercised, or the property proved little.
    expect(outcomes.refused).toBeGreaterThan(0);
    expect(outcomes.applied).toBeGreaterThan(0);
    // A fixed number of syncs, not a time budget: on a loaded two-core
    // machine they take most of a minute, which is no failure.
  }, 300_000);
});
