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
import { query } from '../../../shared/db/pool.ts';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import { seriesOfSnapshot } from '../../../shared/metrics/series.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import {
  decodeInventoryJson,
  ROW_VALIDATORS,
} from '../../../shared/wire/decode.ts';
import {
  KIND_KEYS,
  parseInventoryJson,
} from '../../../shared/wire/inventory.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import {
  createTenant,
  dumpCluster,
  type Tenant,
} from '../../helpers/inventory-db.ts';
import { wholeReason } from '../../helpers/whole-reason.ts';

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
      const original = ROW_VALIDATORS[kind];
      vi.spyOn(ROW_VALIDATORS, kind).mockImplementation((row) => {
        counts[kind] = (counts[kind] ?? 0) + 1;
        return original(row);
      });
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
    const whole = wholeReason(json);

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

  it('refuses a first sync whose malformed row is in a kind built while the pods are written, storing nothing', async () => {
    // Prepare: enough pods to be copied; the endpoint slices and events
    // come after them, so their statements are built while the database
    // still writes the pods.
    const agentId = randomUUID();
    const first = generateInventory({
      seed: 46,
      size: 'medium',
      agentId,
      timestamp: '2026-06-15T12:00:00Z',
    });
    const slice = first.endpoint_slices?.at(-1);
    const event = first.events?.[5];
    if (!slice || !event) throw new Error('the inventory has slices, events');
    (slice as { address_type: unknown }).address_type = 42;
    (event as { count: unknown }).count = 'many';
    const json = JSON.stringify(first);
    const whole = wholeReason(json);

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toMatchObject({ reason: whole });
    expect(whole).toMatch(
      /^events\[5\]\.count: .*; endpoint_slices\[\d+\]\.address_type: /,
    );
    const stored = await query(
      database.db,
      'select id from clusters where agent_id = $1',
      [agentId],
    );
    expect(stored).toEqual([]);
  });

  it('refuses a row whose key holds a raw control character as the whole schema does, for a retry cannot help', async () => {
    // Prepare: JSON.stringify escapes control characters; an agent that
    // writes one raw sends bytes no parser reads.
    const { agentId, first } = messages(47);
    const pod = first.pods?.[0];
    if (!pod) throw new Error('the generated inventory has pods');
    const json = JSON.stringify(first).replace(
      `"name":"${pod.name}"`,
      `"name":"${pod.name}\u0001"`,
    );
    const whole = wholeReason(json);

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toBeInstanceOf(RejectedInventoryError);
    await expect(result).rejects.toMatchObject({ reason: whole });
    expect(
      await query(database.db, 'select id from clusters where agent_id = $1', [
        agentId,
      ]),
    ).toEqual([]);
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

  it('hands the series write its rows, changed ones validated and unchanged ones as sent, with the series of the whole schema output', async () => {
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
    const whole = parseInventoryJson(json);
    const stamp = { clusterId: 'c', environmentId: 'e' };
    expect(seriesOfSnapshot(result.seriesRows, stamp)).toEqual(
      seriesOfSnapshot(whole, stamp),
    );
    // The changed pod as the schema outputs it, an unchanged one as sent.
    const sentPods = later.pods ?? [];
    expect(result.seriesRows.pods?.[0]).toEqual(whole.pods?.[0]);
    expect(result.seriesRows.pods?.[1]).toEqual(
      JSON.parse(JSON.stringify(sentPods[1])),
    );
  });

  it('refuses a resync whose changed row is no JSON with the reason the whole body gets, and writes nothing', async () => {
    // Prepare
    const { first, later } = messages(47);
    const { clusterId } = await sync(JSON.stringify(first));
    const before = await dumpCluster(database.db, clusterId);
    const name = later.pods?.[4]?.name;
    if (!name) throw new Error('the generated inventory has pods');
    const json = JSON.stringify(later).replace(
      `"name":"${name}"`,
      `"name":"${name}",,`,
    );
    const whole = wholeReason(json);

    // Act
    const result = sync(json);

    // Assess
    expect(whole).toMatch(/^body: invalid JSON \(at position \d+\)$/);
    await expect(result).rejects.toMatchObject({ reason: whole });
    expect(await dumpCluster(database.db, clusterId)).toEqual(before);
  });

  it('takes a row sent with other spacing as changed: it is validated and written again', async () => {
    // Prepare
    const { first, later } = messages(48);
    await sync(JSON.stringify(first));
    const counts = countValidations();

    // Act: the same values, indented.
    const result = await sync(JSON.stringify(later, null, 1));
    const again = await sync(
      JSON.stringify({ ...later, timestamp: '2026-06-15T12:02:00Z' }, null, 1),
    );

    // Assess
    expect(counts.pods).toBe(later.pods?.length);
    expect(result.kinds.pods).toMatchObject({
      upserted: later.pods?.length,
      pruned: 0,
    });
    // Known by its new bytes from then on.
    expect(again.kinds.pods).toMatchObject({ upserted: 0, pruned: 0 });
  });

  it('refuses a workload whose bytes are those of a known row with its facts cut out', async () => {
    // Prepare: a workload whose facts are null; the resync drops the
    // member and leaves a byte no JSON has in its place.
    const { first, later } = messages(49);
    const index = first.workloads?.findIndex((w) => w.spec_facts) ?? -1;
    const workload = first.workloads?.[index];
    if (!workload) throw new Error('a workload has facts');
    workload.spec_facts = null;
    (later.workloads?.[index] as { spec_facts: unknown }).spec_facts = null;
    await sync(JSON.stringify(first));
    const json = JSON.stringify(later).replace(',"spec_facts":null', ',\u0001');
    expect(json).toContain('\u0001');

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toMatchObject({
      reason: expect.stringMatching(/^body: invalid JSON/),
    });
  });

  it('refuses a first sync whose malformed pod is overwritten by a later one of its key, writing nothing', async () => {
    // Prepare: pods are validated as they are written; the earlier row of a
    // key is never written (the last one wins), yet it must still refuse.
    const { agentId, first } = messages(50);
    const pods = first.pods ?? [];
    const pod = pods[3];
    if (!pod) throw new Error('the generated inventory has pods');
    pods.unshift({ ...pod, restart_count: -1 });
    const json = JSON.stringify(first);

    // Act
    const result = sync(json);

    // Assess
    await expect(result).rejects.toMatchObject({ reason: wholeReason(json) });
    expect(wholeReason(json)).toMatch(/^pods\[0\]\.restart_count: /);
    const [row] = await query<{ n: string }>(
      database.db,
      'select count(*) as n from clusters where agent_id = $1',
      [agentId],
    );
    expect(Number(row?.n)).toBe(0);
  });
});
