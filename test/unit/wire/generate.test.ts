import { describe, expect, it } from 'vitest';
import {
  type Inventory,
  KIND_KEYS,
  type KindKey,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import {
  generateInventory,
  mutateInventory,
  SIZES,
  type SizeName,
} from '../../fixtures/generate.ts';
import { specFactsViolations } from './spec-facts-rules.ts';

/** The identity a row is synced by. */
function rowKey(key: KindKey, row: Record<string, unknown>): string {
  const kind = key === 'workloads' || key === 'jobs' ? `${row.kind}/` : '';
  const ns = typeof row.namespace === 'string' ? `${row.namespace}/` : '';
  return `${kind}${ns}${row.name}`;
}

function rowsByKey(
  inventory: Inventory,
  key: KindKey,
): Map<string, Record<string, unknown>> {
  const rows = (inventory[key] ?? []) as Record<string, unknown>[];
  return new Map(rows.map((row) => [rowKey(key, row), row]));
}

describe('generateInventory', () => {
  it('builds the same JSON from the same seed, and other JSON from another', () => {
    // Prepare
    const options = { size: 'medium' as const, seed: 42 };

    // Act
    const first = JSON.stringify(generateInventory(options));
    const second = JSON.stringify(generateInventory(options));
    const other = JSON.stringify(generateInventory({ ...options, seed: 43 }));

    // Assess
    expect(second).toBe(first);
    expect(other).not.toBe(first);
  });

  it.each(['small', 'medium', 'large'] as const)(
    'matches the %s preset, kind by kind',
    (size: SizeName) => {
      // Prepare
      const preset = SIZES[size];

      // Act
      const inventory = generateInventory({ size });

      // Assess
      const workloads = preset.namespaces * preset.workloadsPerNamespace;
      expect({
        nodes: inventory.nodes?.length,
        namespaces: inventory.namespaces?.length,
        workloads: inventory.workloads?.length,
        pods: inventory.pods?.length,
        services: inventory.services?.length,
        ingresses: inventory.ingresses?.length,
        pvcs: inventory.pvcs?.length,
        events: inventory.events?.length,
        jobs: inventory.jobs?.length,
        hpas: inventory.hpas?.length,
        network_policies: inventory.network_policies?.length,
        resource_quotas: inventory.resource_quotas?.length,
        endpoint_slices: inventory.endpoint_slices?.length,
      }).toEqual({
        nodes: preset.nodes,
        namespaces: preset.namespaces,
        workloads,
        pods: workloads * preset.podsPerWorkload,
        services: preset.services,
        ingresses: preset.ingresses,
        pvcs: preset.pvcs,
        events: preset.events,
        jobs: preset.jobs,
        hpas: preset.hpas,
        network_policies: preset.networkPolicies,
        resource_quotas: preset.resourceQuotas,
        endpoint_slices: preset.endpointSlices,
      });
    },
  );

  it('has the documented presets: 200, 2,000 and 5,000 pods', () => {
    // Prepare
    const pods = (size: SizeName) =>
      SIZES[size].namespaces *
      SIZES[size].workloadsPerNamespace *
      SIZES[size].podsPerWorkload;

    // Act
    const counts = [pods('small'), pods('medium'), pods('large')];

    // Assess
    expect(counts).toEqual([200, 2_000, 5_000]);
    expect(SIZES.large).toMatchObject({
      nodes: 100,
      events: 1_000,
      services: 500,
      endpointSlices: 500,
    });
  });

  it('makes a large inventory of about 12 MB of JSON', () => {
    // Act
    const json = JSON.stringify(generateInventory({ size: 'large' }));

    // Assess
    expect(json.length).toBeGreaterThan(10_000_000);
    expect(json.length).toBeLessThan(14_000_000);
  });

  it('gives every row a unique identity within its kind', () => {
    // Prepare
    const inventory = generateInventory({ size: 'large' });

    // Act
    const duplicates = KIND_KEYS.filter(
      (key) => rowsByKey(inventory, key).size !== inventory[key]?.length,
    );

    // Assess
    expect(duplicates).toEqual([]);
  });

  it('links pods to generated nodes and workloads, services and slices to pods', () => {
    // Prepare
    const inventory = generateInventory({ size: 'medium' });
    const nodes = new Set(inventory.nodes?.map((n) => n.name));
    const workloads = new Set(
      inventory.workloads?.map((w) => `${w.namespace}/${w.kind}/${w.name}`),
    );
    const pods = new Map(
      inventory.pods?.map((p) => [`${p.namespace}/${p.name}`, p]),
    );

    // Act
    const placed = inventory.pods?.filter((p) => p.node_name !== null) ?? [];
    const orphans = inventory.pods?.filter(
      (p) =>
        !workloads.has(`${p.namespace}/${p.workload_kind}/${p.workload_name}`),
    );
    const targets = inventory.endpoint_slices?.flatMap((s) =>
      s.endpoints.map((e) => `${s.namespace}/${e.target_ref?.name}`),
    );
    const hpaTargets = inventory.hpas?.map(
      (h) => `${h.namespace}/${h.target.kind}/${h.target.name}`,
    );

    // Assess
    expect(placed.length).toBeGreaterThan(0);
    expect(placed.every((p) => nodes.has(p.node_name as string))).toBe(true);
    expect(orphans).toEqual([]);
    expect(targets?.every((t) => pods.has(t))).toBe(true);
    expect(hpaTargets?.every((t) => workloads.has(t))).toBe(true);
    for (const svc of inventory.services ?? []) {
      const selected = [...pods.values()].filter(
        (p) =>
          p.namespace === svc.namespace &&
          Object.entries(svc.selector).every(([k, v]) => p.labels[k] === v),
      );
      expect(selected.length, svc.name).toBeGreaterThan(0);
    }
  });

  it('spreads pods over phases, mostly Running, with waiting reasons', () => {
    // Prepare
    const inventory = generateInventory({ size: 'large' });

    // Act
    const phases = new Map<string, number>();
    const reasons = new Set<string>();
    for (const pod of inventory.pods ?? []) {
      phases.set(pod.phase ?? '', (phases.get(pod.phase ?? '') ?? 0) + 1);
      for (const c of pod.containers) {
        if (c.waiting_reason) reasons.add(c.waiting_reason);
      }
    }

    // Assess
    expect((phases.get('Running') ?? 0) / 5_000).toBeGreaterThan(0.85);
    expect(phases.get('Pending')).toBeGreaterThan(0);
    expect(phases.get('Failed')).toBeGreaterThan(0);
    expect(reasons).toContain('CrashLoopBackOff');
    expect(reasons).toContain('ImagePullBackOff');
  });

  it('gives workloads spec facts of three containers with about 17 env names', () => {
    // Prepare
    const inventory = generateInventory({ size: 'small' });

    // Act
    const violations = (inventory.workloads ?? []).flatMap((w) =>
      w.spec_facts
        ? specFactsViolations(`${w.namespace}/${w.name}`, w.spec_facts, w.kind)
        : [`${w.name}: no facts`],
    );

    // Assess
    expect(violations).toEqual([]);
    for (const w of inventory.workloads ?? []) {
      expect(w.spec_facts?.containers).toHaveLength(3);
      for (const c of w.spec_facts?.containers ?? []) {
        expect(c.env_names).toHaveLength(17);
      }
    }
  });

  it('leaves spec facts out when asked', () => {
    // Act
    const inventory = generateInventory({ size: 'small', specFacts: false });

    // Assess
    expect(inventory.workloads?.every((w) => w.spec_facts === null)).toBe(true);
  });
});

describe('mutateInventory', () => {
  const base = generateInventory({ size: 'medium' });
  const next = mutateInventory(base, {
    seed: 7,
    changeFraction: 0.1,
    removeFraction: 0.02,
  });

  it.each([...KIND_KEYS])('changes 10% and removes 2% of the %s', (key) => {
    // Prepare
    const before = rowsByKey(base, key);
    const after = rowsByKey(next, key);

    // Act
    let removed = 0;
    let changed = 0;
    // A pod's usage moves in every snapshot: the rest is what changed.
    const stored = (row: unknown) =>
      JSON.stringify(key === 'pods' ? { ...(row as object), usage: 0 } : row);
    for (const [id, row] of before) {
      const now = after.get(id);
      if (!now) removed++;
      else if (stored(now) !== stored(row)) changed++;
    }

    // Assess
    expect(removed).toBe(Math.round(before.size * 0.02));
    expect(changed).toBe(Math.round(before.size * 0.1));
    expect(after.size).toBe(before.size - removed);
  });

  it("gives every running pod a new usage, as metrics-server's moves, and other pods none", () => {
    // Prepare
    const again = mutateInventory(next, {
      changeFraction: 0,
      removeFraction: 0,
    });

    // Act
    const pods = (next.pods ?? []).map((pod, i) => ({
      pod,
      later: again.pods?.[i],
    }));

    // Assess
    const running = pods.filter(({ pod }) => pod.phase === 'Running');
    expect(running.length).toBeGreaterThan(0);
    for (const { pod, later } of pods) {
      if (pod.phase !== 'Running') {
        expect(later?.usage).toBeNull();
        continue;
      }
      expect(pod.usage?.cpu_millicores).toBeGreaterThan(0);
      expect(later?.usage).not.toEqual(pod.usage);
      expect({ ...later, usage: null }).toEqual({ ...pod, usage: null });
    }
  });

  it('returns a new valid inventory, later, and leaves its input alone', () => {
    // Prepare
    const snapshot = JSON.stringify(generateInventory({ size: 'medium' }));

    // Act
    const parsed = parseInventory(JSON.parse(JSON.stringify(next)));

    // Assess
    expect(JSON.stringify(base)).toBe(snapshot);
    expect(parsed).toEqual(next);
    expect(Date.parse(next.timestamp)).toBeGreaterThan(
      Date.parse(base.timestamp),
    );
  });

  it('bumps the image of a few changed workloads in their spec facts', () => {
    // Prepare
    const before = rowsByKey(base, 'workloads');

    // Act
    const bumped = (next.workloads ?? []).filter((w) => {
      const old = before.get(rowKey('workloads', w)) as
        | (typeof w & Record<string, unknown>)
        | undefined;
      return (
        old &&
        JSON.stringify(old.spec_facts) !== JSON.stringify(w.spec_facts) &&
        old.containers[0]?.image !== w.containers[0]?.image
      );
    });

    // Assess
    expect(bumped.length).toBeGreaterThan(0);
    expect(bumped.length).toBeLessThan(base.workloads?.length ?? 0);
  });

  it('is deterministic for a seed', () => {
    // Act
    const again = mutateInventory(base, {
      seed: 7,
      changeFraction: 0.1,
      removeFraction: 0.02,
    });

    // Assess
    expect(JSON.stringify(again)).toBe(JSON.stringify(next));
  });
});
