/**
 * The sync worker's path (issue #15): a resync validates only the rows its
 * stored digests do not know, and refuses a changed malformed row exactly as
 * the whole schema does, whole, writing nothing.
 */
import { randomUUID } from 'node:crypto';
import {
  afterAll,
  afterEach,
  beforeAll,
  describe,
  expect,
  it,
  vi,
} from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { generateInventory } from '../../../shared/fixtures/generate.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import {
  decodeInventoryJson,
  KIND_KEYS,
  parseInventoryJson,
  ROW_SCHEMAS,
} from '../../../shared/wire/inventory.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  dumpCluster,
  type Tenant,
} from '../../helpers/inventory-db.ts';

const NOW = new Date('2026-06-15T12:30:00Z');

describe('validating only what changed', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());
  afterEach(() => vi.restoreAllMocks());

  /** A generated message as an agent sends it, and one minute later. */
  function messages(seed: number) {
    const agentId = randomUUID();
    const first = generateInventory({
      seed,
      agentId,
      timestamp: '2026-06-15T12:00:00Z',
    });
    const later = structuredClone(first);
    later.timestamp = '2026-06-15T12:01:00Z';
    return { agentId, first, later };
  }

  const sync = (json: string) => {
    const wire = decodeInventoryJson(json);
    return syncInventory(
      database.db,
      {
        clientSlug: tenant.clientSlug,
        envSlug: tenant.envSlug,
        agentId: wire.agent_id,
      },
      wire,
      { now: () => NOW },
    );
  };

  /** Counts each kind's row validations from here on. */
  function countValidations() {
    const counts: Record<string, number> = {};
    for (const kind of KIND_KEYS) {
      counts[kind] = 0;
      const schema = ROW_SCHEMAS[kind];
      const original = schema.safeParse.bind(schema);
      vi.spyOn(schema, 'safeParse').mockImplementation(((
        ...args: Parameters<typeof original>
      ) => {
        counts[kind] = (counts[kind] ?? 0) + 1;
        return original(...args);
      }) as typeof schema.safeParse);
    }
    return counts;
  }

  it('validates every row of a first sync, and none of a resync of the same bytes', async () => {
    // Prepare
    const { first, later } = messages(41);
    const counts = countValidations();

    // Act
    await sync(JSON.stringify(first));
    const firstCounts = { ...counts };
    for (const kind of KIND_KEYS) counts[kind] = 0;
    const result = await sync(JSON.stringify(later));

    // Assess
    expect(firstCounts.pods).toBe(first.pods?.length);
    expect(firstCounts.workloads).toBe(first.workloads?.length);
    expect(Object.values(counts).every((n) => n === 0)).toBe(true);
    expect(result.outcome).toBe('applied');
    expect(result.kinds.pods?.upserted).toBe(0);
  });

  it('validates and writes only the row that changed', async () => {
    // Prepare
    const { first, later } = messages(42);
    await sync(JSON.stringify(first));
    const pod = later.pods?.[3];
    if (!pod) throw new Error('the generated inventory has pods');
    pod.restart_count = (pod.restart_count ?? 0) + 1;
    const counts = countValidations();

    // Act
    const result = await sync(JSON.stringify(later));

    // Assess
    expect(counts).toMatchObject({ pods: 1, workloads: 0, nodes: 0 });
    expect(result.kinds.pods).toMatchObject({ upserted: 1, pruned: 0 });
  });

  it('refuses a changed malformed row as the whole schema does, and writes nothing', async () => {
    // Prepare
    const { first, later } = messages(43);
    const { clusterId } = await sync(JSON.stringify(first));
    const before = await dumpCluster(database.db, clusterId);
    const pods = later.pods ?? [];
    (pods[2] as { restart_count: unknown }).restart_count = -1;
    (pods[7] as { phase: unknown }).phase = 7;
    const workload = later.workloads?.[1];
    if (!workload) throw new Error('the generated inventory has workloads');
    (workload as { replicas_desired: unknown }).replicas_desired = 'three';
    const json = JSON.stringify(later);
    const whole = (() => {
      try {
        parseInventoryJson(json);
      } catch (error) {
        return (error as RejectedInventoryError).reason;
      }
      throw new Error('the whole schema accepted it');
    })();

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(result).rejects.toMatchObject({ reason: whole });
    expect(whole).toBe(
      'workloads[1].replicas_desired: expected an integer; pods[2].restart_count: must be at least 0; pods[7].phase: expected a string',
    );
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('refuses a number that overflows where an unchanged row had null', async () => {
    // Prepare: JSON.stringify writes Infinity as null, so bytes alone
    // would take the row as unchanged.
    const { first, later } = messages(44);
    const pod = first.pods?.[0];
    if (!pod) throw new Error('the generated inventory has pods');
    pod.restart_count = null;
    (later.pods?.[0] as { restart_count: unknown }).restart_count = null;
    const { clusterId } = await sync(JSON.stringify(first));
    const before = await dumpCluster(database.db, clusterId);
    const json = JSON.stringify(later).replace(
      '"restart_count":null',
      '"restart_count":1e400',
    );
    expect(json).toContain('1e400');

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toMatchObject({
      reason: expect.stringMatching(/^pods\[0\]\.restart_count: /),
    });
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('validates a workload whose facts alone changed, without rewriting its row', async () => {
    // Prepare
    const { first, later } = messages(45);
    await sync(JSON.stringify(first));
    const workload = later.workloads?.find((w) => w.spec_facts);
    if (!workload?.spec_facts) throw new Error('a workload has facts');
    const container = workload.spec_facts.containers[0];
    if (!container) throw new Error('the facts have a container');
    container.image = `${container.image}-next`;
    const counts = countValidations();

    // Act
    const result = await sync(JSON.stringify(later));
    const again = await sync(
      JSON.stringify({ ...later, timestamp: '2026-06-15T12:02:00Z' }),
    );

    // Assess
    expect(result.kinds.workloads?.upserted).toBe(0);
    expect(result.facts.diffed).toBe(1);
    expect(again.facts.diffed).toBe(0);
    // Once for the change; the next resync finds it known.
    expect(counts.workloads).toBe(1);
  });

  it('hands later steps the snapshot as the whole schema normalizes it, unchanged rows too', async () => {
    // Prepare
    const { first, later } = messages(46);
    await sync(JSON.stringify(first));
    const pod = later.pods?.[0];
    if (!pod) throw new Error('the generated inventory has pods');
    pod.phase = 'Failed';
    // As an agent in Go sends an empty list: the schema makes it [].
    (later.nodes?.[0] as { taints: unknown }).taints = null;
    const json = JSON.stringify(later);

    // Act
    const result = await sync(json);

    // Assess
    expect(JSON.parse(JSON.stringify(result.inventory))).toEqual(
      JSON.parse(JSON.stringify(parseInventoryJson(json))),
    );
  });
});
