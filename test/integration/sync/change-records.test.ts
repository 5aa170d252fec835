import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { query, queryOne } from '../../../shared/db/pool.ts';
import { syncInventory } from '../../../shared/sync/sync.ts';
import {
  type Inventory,
  type InventoryInput,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import type { SpecFacts } from '../../../shared/wire/spec-facts.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';

const T0 = Date.parse('2026-06-15T12:00:00Z');
const at = (minutes: number) => new Date(T0 + minutes * 60_000).toISOString();

function facts(overrides: Partial<SpecFacts> = {}): SpecFacts {
  return {
    replicas: 3,
    strategy: {
      type: 'RollingUpdate',
      max_surge: '25%',
      max_unavailable: '25%',
    },
    containers: [
      {
        name: 'checkout-api',
        image: 'registry.example.com/shop/checkout-api:2.40.3',
        requests: { cpu: '500m', memory: '512Mi' },
        limits: { cpu: '1', memory: '1Gi' },
        env_names: ['DATABASE_URL', 'LOG_LEVEL'],
        env_from: ['configmap:checkout-config'],
        volume_refs: ['secret:checkout-tls'],
      },
    ],
    facts_version: 1,
    ...overrides,
  };
}

interface Snapshot {
  minutes: number;
  specFacts?: SpecFacts | null;
  /** 'not_collected': the snapshot has no `hpas` array at all. */
  hpa?: boolean | 'not_collected';
  annotations?: Record<string, string>;
}

/** One Deployment shop/checkout-api, optionally with an HPA targeting it. */
function snapshot(agentId: string, s: Snapshot): Inventory {
  const input: InventoryInput = {
    type: 'kubernetes',
    schema_version: 1,
    agent_id: agentId,
    agent_version: 'v0.8.0',
    timestamp: at(s.minutes),
    cluster: { name: 'k8s-prod-01', status: 'healthy' },
    namespaces: [{ name: 'shop', status: 'Active' }],
    workloads: [
      {
        namespace: 'shop',
        name: 'checkout-api',
        kind: 'Deployment',
        replicas_desired: s.specFacts?.replicas ?? 3,
        annotations: s.annotations ?? {},
        containers: [],
        ...(s.specFacts === undefined ? {} : { spec_facts: s.specFacts }),
      },
    ],
    ...(s.hpa === 'not_collected' ? {} : { hpas: hpasOf(s.hpa === true) }),
  };
  return parseInventory(input);
}

function hpasOf(present: boolean): InventoryInput['hpas'] {
  return present
    ? [
        {
          namespace: 'shop',
          name: 'checkout-api',
          target: {
            kind: 'Deployment',
            name: 'checkout-api',
            api_version: 'apps/v1',
          },
          min_replicas: 2,
          max_replicas: 10,
        },
      ]
    : [];
}

describe('workload change records', () => {
  let database: TestDatabase;
  let tenant: Tenant;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
  });
  afterAll(() => database.drop());

  /** Syncs `inventory` as `agentId`'s, processed at `now`. */
  async function syncAs(
    agentId: string,
    inventory: Inventory,
    options: { now?: Date; streamSeq?: number } = {},
  ) {
    const now = options.now ?? new Date(T0 + 60 * 60_000);
    return syncInventory(
      database.db,
      { clientSlug: tenant.clientSlug, envSlug: tenant.envSlug, agentId },
      inventory,
      { now: () => now, streamSeq: options.streamSeq },
    );
  }

  async function run(agentId: string, s: Snapshot, now?: Date) {
    return syncAs(agentId, snapshot(agentId, s), { now });
  }

  async function storedFacts(clusterId: string) {
    const stored = await queryOne(
      database.db,
      'select spec_facts from k8s_workloads where cluster_id = $1',
      [clusterId],
    );
    return stored.spec_facts;
  }

  async function changeRows(clusterId: string) {
    return query<{
      event_type: string;
      summary: string;
      details: Record<string, unknown>;
      scanned_at: Date;
    }>(
      database.db,
      `select source, event_type, client_id, environment_id, host_id, scanned_at,
              severity, summary, details
       from change_events where details ->> 'cluster_id' = $1
       order by scanned_at, created_at`,
      [clusterId],
    );
  }

  it('stores the first facts it sees as a baseline and records nothing', async () => {
    // Prepare
    const agent = randomUUID();

    // Act
    const result = await run(agent, { minutes: 0, specFacts: facts() });

    // Assess
    expect(await changeRows(result.clusterId)).toEqual([]);
    expect(result.facts.baselined).toBe(1);
    const stored = await queryOne(
      database.db,
      'select spec_facts, spec_facts_at from k8s_workloads where cluster_id = $1',
      [result.clusterId],
    );
    expect(stored).toEqual({
      spec_facts: facts(),
      spec_facts_at: new Date(at(0)),
    });
  });

  it('records an image and memory limit change as one workload_changed row', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });
    const after = facts();
    const c = after.containers[0];
    if (!c) throw new Error('fixture has a container');
    c.image = 'registry.example.com/shop/checkout-api:2.41.0';
    c.limits = { cpu: '1', memory: '768Mi' };
    c.env_names = ['DATABASE_URL', 'FEATURE_FLAGS', 'LOG_LEVEL'];
    c.volume_refs = ['secret:checkout-tls', 'configmap:checkout-rules'].sort();

    // Act
    const result = await run(agent, { minutes: 5, specFacts: after });

    // Assess
    // Only the facts changed: the workload's own row is not rewritten.
    expect(result.kinds.workloads?.upserted).toBe(0);
    const rows = await changeRows(result.clusterId);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      source: 'k8s-config',
      event_type: 'workload_changed',
      client_id: tenant.clientId,
      environment_id: tenant.environmentId,
      host_id: null,
      severity: 'info',
      scanned_at: new Date(at(5)),
      summary:
        'Deployment shop/checkout-api: image checkout-api 2.40.3 → 2.41.0; memory limit 1Gi → 768Mi; +2 more',
    });
    expect(rows[0]?.details).toMatchObject({
      cluster_id: result.clusterId,
      cluster: 'k8s-prod-01',
      kind: 'Deployment',
      namespace: 'shop',
      name: 'checkout-api',
      change_count: 4,
      truncated: false,
    });
  });

  it('records a manual scale as workload_scaled', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 0 }),
    });

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows.map((r) => [r.event_type, r.summary])).toEqual([
      ['workload_scaled', 'Deployment shop/checkout-api scaled 3 → 0'],
    ]);
  });

  it('records no row for a replicas change made by an HPA in the same snapshot', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts(), hpa: true });

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 7 }),
      hpa: true,
    });

    // Assess
    expect(await changeRows(result.clusterId)).toEqual([]);
  });

  it('records everything but replicas for a mixed change under an HPA', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts(), hpa: true });
    const after = facts({ replicas: 7 });
    const c = after.containers[0];
    if (c) c.image = 'registry.example.com/shop/checkout-api:2.41.0';

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: after,
      hpa: true,
    });

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows.map((r) => [r.event_type, r.summary])).toEqual([
      [
        'workload_changed',
        'Deployment shop/checkout-api: image checkout-api 2.40.3 → 2.41.0',
      ],
    ]);
  });

  it('records no row for an HPA replica move in a sync that did not collect HPAs', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts(), hpa: true });

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 8 }),
      hpa: 'not_collected',
    });

    // Assess
    expect(await changeRows(result.clusterId)).toEqual([]);
    expect(result.facts.diffed).toBe(1);
  });

  it('records a manual scale in a sync without HPAs when the last HPA list did not target the workload', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts(), hpa: false });

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 8 }),
      hpa: 'not_collected',
    });

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows.map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 8',
    ]);
  });

  it('records a scale as manual when the same sync deletes its HPA', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts(), hpa: true });

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 1 }),
      hpa: false,
    });

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows.map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 1',
    ]);
  });

  it('keeps the stored facts when a sync carries none, and records nothing when they return unchanged', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });

    // Act
    const absent = await run(agent, { minutes: 5 });
    const back = await run(agent, { minutes: 10, specFacts: facts() });

    // Assess
    expect(absent.facts).toEqual({
      baselined: 0,
      diffed: 0,
      recorded: 0,
      notNewer: 0,
    });
    expect(await changeRows(back.clusterId)).toEqual([]);
    expect(await storedFacts(back.clusterId)).toEqual(facts());
  });

  it('takes a facts version change as a new baseline', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });
    const respelled = facts({ facts_version: 2, replicas: 4 });

    // Act
    const result = await run(agent, { minutes: 5, specFacts: respelled });

    // Assess
    expect(await changeRows(result.clusterId)).toEqual([]);
    expect(result.facts.baselined).toBe(1);
  });

  it('writes one change row for a workload the snapshot lists twice: the last entry wins', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });
    const twice = snapshot(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 4 }),
    });
    const [first] = twice.workloads ?? [];
    if (!first) throw new Error('fixture has a workload');
    twice.workloads = [
      first,
      { ...first, spec_facts: facts({ replicas: 6 }), replicas_desired: 6 },
    ];

    // Act
    const result = await syncAs(agent, twice);

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows.map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 6',
    ]);
    expect(await storedFacts(result.clusterId)).toEqual(facts({ replicas: 6 }));
  });

  it('counts a replayed snapshot as not newer and records nothing', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });

    // Act
    const replay = await run(agent, { minutes: 0, specFacts: facts() });

    // Assess
    expect(replay.facts.notNewer).toBe(1);
    expect(await changeRows(replay.clusterId)).toEqual([]);
  });

  it('ignores a redelivered older snapshot: no rollback recorded, nothing rewound', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });
    const newer = facts({ replicas: 5 });
    await run(agent, { minutes: 10, specFacts: newer });

    // Act
    const late = await run(agent, { minutes: 5, specFacts: facts() });

    // Assess
    expect(late.outcome).toBe('skipped_not_newer');
    expect(late.facts.notNewer).toBe(1);
    const rows = await changeRows(late.clusterId);
    expect(rows.map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 5',
    ]);
    expect(await storedFacts(late.clusterId)).toEqual(newer);
  });

  it('ignores an older snapshot delivered late by an agent whose clock runs 10 minutes fast', async () => {
    // Prepare: every stamp is clamped to processing time plus a minute.
    const agent = randomUUID();
    const sync = (
      sentMinutes: number,
      processedMinutes: number,
      specFacts: SpecFacts,
      streamSeq: number,
    ) =>
      syncAs(agent, snapshot(agent, { minutes: sentMinutes + 10, specFacts }), {
        now: new Date(T0 + processedMinutes * 60_000),
        streamSeq,
      });
    await sync(0, 0, facts(), 1);
    const newer = facts({ replicas: 5 });
    await sync(1, 1, newer, 2);

    // Act: the first snapshot again, three minutes on, behind the second.
    const late = await sync(0, 3, facts(), 1);

    // Assess
    expect(late.clamped).toBe(true);
    expect(late.outcome).toBe('skipped_not_newer');
    const rows = await changeRows(late.clusterId);
    expect(rows.map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 5',
    ]);
    expect(await storedFacts(late.clusterId)).toEqual(newer);
  });

  it('clamps a stamp from a clock ahead, so later honest snapshots still record', async () => {
    // Prepare
    const agent = randomUUID();
    const now = new Date(T0);
    await run(agent, { minutes: 0, specFacts: facts() }, now);

    // Act: a snapshot stamped a day ahead, then an honest one two minutes on.
    const ahead = await run(
      agent,
      { minutes: 24 * 60, specFacts: facts({ replicas: 4 }) },
      now,
    );
    const honest = await run(
      agent,
      { minutes: 2, specFacts: facts({ replicas: 6 }) },
      new Date(T0 + 2 * 60_000),
    );

    // Assess
    expect(ahead.clamped).toBe(true);
    expect(ahead.snapshotAt).toEqual(new Date(T0 + 60_000));
    const rows = await changeRows(honest.clusterId);
    expect(rows.map((r) => [r.summary, r.scanned_at])).toEqual([
      ['Deployment shop/checkout-api scaled 3 → 4', new Date(T0 + 60_000)],
      ['Deployment shop/checkout-api scaled 4 → 6', new Date(T0 + 2 * 60_000)],
    ]);
  });

  it('records once when two snapshots of one cluster are processed at the same time', async () => {
    // Prepare
    const agent = randomUUID();
    await run(agent, { minutes: 0, specFacts: facts() });
    const changed = facts({ replicas: 5 });

    // Act: the same snapshot delivered twice, processed concurrently.
    const [a] = await Promise.all([
      run(agent, { minutes: 5, specFacts: changed }),
      run(agent, { minutes: 5, specFacts: changed }),
    ]);

    // Assess
    expect(await changeRows(a.clusterId)).toHaveLength(1);
  });

  it('records once when a sync crashes after the diff and the snapshot is redelivered', async () => {
    // Prepare
    const agent = randomUUID();
    const first = await run(agent, { minutes: 0, specFacts: facts() });
    const changed = snapshot(agent, {
      minutes: 5,
      specFacts: facts({ replicas: 2 }),
    });
    const subject = {
      clientSlug: tenant.clientSlug,
      envSlug: tenant.envSlug,
      agentId: agent,
    };

    // Act
    const crashed = await syncInventory(database.db, subject, changed, {
      now: () => new Date(T0 + 3_600_000),
      beforePrune: async () => {
        throw new Error('crash before commit');
      },
    }).catch((error: unknown) => error);
    const afterCrash = await changeRows(first.clusterId);
    await syncInventory(database.db, subject, changed, {
      now: () => new Date(T0 + 3_600_000),
    });

    // Assess
    expect(crashed).toBeInstanceOf(Error);
    expect(afterCrash).toEqual([]);
    expect((await changeRows(first.clusterId)).map((r) => r.summary)).toEqual([
      'Deployment shop/checkout-api scaled 3 → 2',
    ]);
  });

  it('never lets an annotation or other value reach a change row', async () => {
    // Prepare
    const agent = randomUUID();
    const marker = (n: number) => `MARKER-${n}-${randomUUID()}`;
    const planted = [marker(1), marker(2), marker(3)];
    await run(agent, {
      minutes: 0,
      specFacts: facts(),
      annotations: { 'example.com/secret': planted[0] ?? '' },
    });
    const after = facts({ replicas: 4 });
    const c = after.containers[0];
    if (c) c.image = 'registry.example.com/shop/checkout-api:2.41.0';

    // Act
    const result = await run(agent, {
      minutes: 5,
      specFacts: after,
      annotations: {
        'example.com/secret': planted[1] ?? '',
        'kubectl.kubernetes.io/last-applied-configuration': planted[2] ?? '',
      },
    });

    // Assess
    const rows = await changeRows(result.clusterId);
    expect(rows).toHaveLength(1);
    const stored = JSON.stringify(rows);
    for (const m of planted) expect(stored).not.toContain(m);
  });
});
