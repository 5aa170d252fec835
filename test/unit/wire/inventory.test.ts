import { describe, expect, it } from 'vitest';
import { RejectedInventoryError } from '../../../shared/errors.ts';
import {
  type Inventory,
  inventorySchema,
  KIND_KEYS,
  parseInventory,
  parseInventoryJson,
} from '../../../shared/wire/inventory.ts';
import { formatIssues } from '../../../shared/wire/issues.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { realisticInventoryMessage } from '../../fixtures/realistic.ts';

/** A small generated message as plain JSON, free to edit. */
// biome-ignore lint/suspicious/noExplicitAny: tests edit raw JSON at will, as a faulty agent could
function message(): Record<string, any> {
  return JSON.parse(JSON.stringify(generateInventory({ size: 'small' })));
}

/** The refusal reason of `fn`, failing the test when it does not refuse. */
function reasonOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RejectedInventoryError);
    return (err as RejectedInventoryError).reason;
  }
  throw new Error('expected the inventory to be refused');
}

describe('parseInventory', () => {
  it('accepts the realistic inventory built from captured objects', () => {
    // Prepare
    const input = realisticInventoryMessage();

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.cluster.name).toBe('prod-eu-1');
    for (const key of KIND_KEYS) {
      expect(inventory[key]?.length, key).toBeGreaterThan(0);
    }
  });

  it.each(['small', 'medium', 'large'] as const)(
    'accepts a generated %s inventory unchanged',
    (size) => {
      // Prepare
      const generated = generateInventory({ size });
      const json = JSON.parse(JSON.stringify(generated));

      // Act
      const inventory = parseInventory(json);

      // Assess
      expect(inventory).toEqual(generated);
    },
    // A 5,000-pod inventory's deep compare takes seconds on a busy machine.
    60_000,
  );

  it('refuses a message of another type, naming the field', () => {
    // Prepare
    const input = { ...message(), type: 'host' };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('type: expected "kubernetes"');
  });

  it('refuses schema_version 2 with one clear reason, before reading anything else', () => {
    // Prepare
    const input = {
      type: 'something-else',
      schema_version: 2,
      agent_id: 'not-a-uuid',
      nodes: 'not an array',
    };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe(
      'schema_version 2 is not supported: this backend reads schema_version 1',
    );
  });

  it('refuses a missing or non-integer schema_version', () => {
    // Prepare
    const { schema_version: _, ...missing } = message();
    const text = { ...message(), schema_version: '1' };

    // Act
    const missingReason = reasonOf(() => parseInventory(missing));
    const textReason = reasonOf(() => parseInventory(text));

    // Assess
    expect(missingReason).toBe('schema_version: required');
    expect(textReason).toBe('schema_version: expected an integer');
  });

  it('refuses a body that is not a JSON object', () => {
    // Prepare
    const inputs = [null, [], 'inventory', 42];

    // Act
    const reasons = inputs.map((input) =>
      reasonOf(() => parseInventory(input)),
    );

    // Assess
    for (const reason of reasons) {
      expect(reason).toBe('inventory: expected a JSON object');
    }
  });

  it('refuses an agent_id that is not a UUID', () => {
    // Prepare
    const input = { ...message(), agent_id: 'agent-7' };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('agent_id: expected a UUID');
  });

  it('lower-cases the agent_id so it compares with the subject', () => {
    // Prepare
    const input = {
      ...message(),
      agent_id: '3F6C2A9E-8B1D-4C7E-9A05-2D4B6E8F1A3C',
    };

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.agent_id).toBe('3f6c2a9e-8b1d-4c7e-9a05-2d4b6e8f1a3c');
  });

  it.each([
    '2026-06-15T12:00:00',
    '2026-06-15',
    'yesterday',
    '2026-13-01T00:00:00Z',
  ])('refuses the timestamp %s', (timestamp) => {
    // Prepare
    const input = { ...message(), timestamp };

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('timestamp: expected an RFC 3339 time with an offset');
  });

  it('accepts RFC 3339 times with an offset and fractional seconds', () => {
    // Prepare
    const input = message();
    input.timestamp = '2026-06-15T14:00:00.123456+02:00';
    input.pods[0].created_at = '2026-06-15T11:59:00.5Z';

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.timestamp).toBe('2026-06-15T14:00:00.123456+02:00');
    expect(inventory.pods?.[0]?.created_at).toBe('2026-06-15T11:59:00.5Z');
  });

  it('refuses a row without its name, naming the row', () => {
    // Prepare
    const input = message();
    delete input.pods[7].name;

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('pods[7].name: required');
  });

  it('refuses a namespaced row without its namespace', () => {
    // Prepare
    const input = message();
    input.services[2].namespace = '';

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('services[2].namespace: must not be empty');
  });

  it('refuses a string where an integer is expected', () => {
    // Prepare
    const input = message();
    input.workloads[3].replicas_desired = '3';

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe('workloads[3].replicas_desired: expected an integer');
  });

  it('refuses fractional and negative amounts', () => {
    // Prepare
    const fraction = message();
    fraction.pods[0].containers[1].requests.cpu_millicores = 0.5;
    const negative = message();
    negative.nodes[1].capacity.memory_bytes = -1;

    // Act
    const fractionReason = reasonOf(() => parseInventory(fraction));
    const negativeReason = reasonOf(() => parseInventory(negative));

    // Assess
    expect(fractionReason).toBe(
      'pods[0].containers[1].requests.cpu_millicores: expected an integer',
    );
    expect(negativeReason).toBe(
      'nodes[1].capacity.memory_bytes: must be at least 0',
    );
  });

  it('refuses a count past 32 bits, naming the field, where bytes may go past it', () => {
    // Prepare
    const restarts = message();
    restarts.pods[0].restart_count = 2 ** 31;
    const memory = message();
    memory.nodes[0].capacity.memory_bytes = 2 ** 40;

    // Act
    const reason = reasonOf(() => parseInventory(restarts));
    const inventory = parseInventory(memory);

    // Assess
    expect(reason).toBe('pods[0].restart_count: must be at most 2147483647');
    expect(inventory.nodes?.[0]?.capacity.memory_bytes).toBe(2 ** 40);
  });

  it('accepts byte amounts above 2^31', () => {
    // Prepare
    const input = message();
    input.pvcs[0].capacity_bytes = 16 * 1024 ** 4;

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.pvcs?.[0]?.capacity_bytes).toBe(17_592_186_044_416);
  });

  it('refuses strings over their cap, quoting odd keys in the path', () => {
    // Prepare
    const longName = message();
    longName.pods[1].name = 'p'.repeat(254);
    const longLabel = message();
    longLabel.pods[0].labels['app.kubernetes.io/name'] = 'v'.repeat(64);
    const longMessage = message();
    longMessage.events[0].message = 'm'.repeat(32 * 1024 + 1);

    // Act
    const reasons = [longName, longLabel, longMessage].map((input) =>
      reasonOf(() => parseInventory(input)),
    );

    // Assess
    expect(reasons).toEqual([
      'pods[1].name: longer than 253 characters',
      'pods[0].labels["app.kubernetes.io/name"]: longer than 63 characters',
      'events[0].message: longer than 32768 characters',
    ]);
  });

  it('refuses a cluster status outside its list', () => {
    // Prepare
    const input = message();
    input.cluster.status = 'on-fire';

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    expect(reason).toBe(
      'cluster.status: expected one of "healthy", "degraded", "unreachable", "unknown"',
    );
  });

  it('passes Kubernetes phases it does not know through', () => {
    // Prepare
    const input = message();
    input.namespaces[0].status = 'Failed';
    input.pods[0].phase = 'SomethingNew';

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.namespaces?.[0]?.status).toBe('Failed');
    expect(inventory.pods?.[0]?.phase).toBe('SomethingNew');
  });

  it('names at most five issues and counts the rest', () => {
    // Prepare
    const input = message();
    for (let i = 0; i < 8; i++) input.pods[i].restart_count = 'many';

    // Act
    const reason = reasonOf(() => parseInventory(input));

    // Assess
    const named = [0, 1, 2, 3, 4].map(
      (i) => `pods[${i}].restart_count: expected an integer`,
    );
    expect(reason).toBe(`${named.join('; ')} (+3 more)`);
  });

  it('keeps a missing or null kind array undefined, so its kind is not pruned', () => {
    // Prepare
    const input = message();
    delete input.ingresses;
    input.hpas = null;
    input.events = [];

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.ingresses).toBeUndefined();
    expect(inventory.hpas).toBeUndefined();
    expect(inventory.events).toEqual([]);
  });

  it('ignores unknown fields at every level', () => {
    // Prepare
    const input = message();
    input.future_field = { anything: true };
    input.cluster.mesh = 'istio';
    input.pods[0].priority_class = 'high';
    input.pods[0].containers[0].image_id = 'sha256:abc';

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory).not.toHaveProperty('future_field');
    expect(inventory.cluster).not.toHaveProperty('mesh');
    expect(inventory.pods?.[0]).not.toHaveProperty('priority_class');
    expect(inventory.pods?.[0]?.containers[0]).not.toHaveProperty('image_id');
  });

  it('reads absent optional fields as null and never invents a count', () => {
    // Prepare
    const input = {
      type: 'kubernetes',
      schema_version: 1,
      agent_id: '3f6c2a9e-8b1d-4c7e-9a05-2d4b6e8f1a3c',
      timestamp: '2026-06-15T12:00:00Z',
      cluster: { name: 'bare' },
      namespaces: [{ name: 'default' }],
      pods: [{ namespace: 'default', name: 'p', containers: [{ name: 'c' }] }],
      workloads: [{ namespace: 'default', name: 'w', kind: 'Deployment' }],
    };

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.agent_version).toBeNull();
    expect(inventory.collection).toBeNull();
    expect(inventory.cluster.status).toBeNull();
    expect(inventory.namespaces?.[0]).toEqual({
      name: 'default',
      uid: null,
      labels: {},
      created_at: null,
      status: null,
      workload_count: null,
      pod_count: null,
      service_count: null,
    });
    const pod = inventory.pods?.[0];
    expect(pod?.restart_count).toBeNull();
    expect(pod?.containers[0]).toEqual({
      name: 'c',
      image: null,
      init: false,
      ready: null,
      restart_count: null,
      state: null,
      waiting_reason: null,
      last_termination_reason: null,
      requests: { cpu_millicores: null, memory_bytes: null },
      limits: { cpu_millicores: null, memory_bytes: null },
    });
    expect(inventory.workloads?.[0]?.spec_facts).toBeNull();
    expect(inventory.workloads?.[0]?.replicas_desired).toBeNull();
  });

  it('reads null lists, maps and amounts in rows as empty', () => {
    // Prepare
    const input = message();
    input.nodes[0].taints = null;
    input.nodes[0].capacity = null;
    input.nodes[0].usage = null;
    input.pods[0].labels = null;
    input.pods[0].containers[0].limits = null;
    input.services[0].selector = null;
    input.hpas[0].target = null;
    input.network_policies[0].pod_selector = null;

    // Act
    const inventory = parseInventory(input);

    // Assess
    const node = inventory.nodes?.[0];
    expect(node?.taints).toEqual([]);
    expect(node?.capacity).toEqual({
      cpu_millicores: null,
      memory_bytes: null,
      pods: null,
    });
    expect(node?.usage).toBeNull();
    expect(inventory.pods?.[0]?.labels).toEqual({});
    expect(inventory.pods?.[0]?.containers[0]?.limits).toEqual({
      cpu_millicores: null,
      memory_bytes: null,
    });
    expect(inventory.services?.[0]?.selector).toEqual({});
    expect(inventory.hpas?.[0]?.target).toEqual({
      kind: null,
      name: null,
      api_version: null,
    });
    expect(inventory.network_policies?.[0]?.pod_selector).toEqual({});
  });

  it('never shares a default between rows or parses', () => {
    // Prepare
    const input = {
      type: 'kubernetes',
      schema_version: 1,
      agent_id: '3f6c2a9e-8b1d-4c7e-9a05-2d4b6e8f1a3c',
      timestamp: '2026-06-15T12:00:00Z',
      cluster: { name: 'bare' },
      namespaces: [{ name: 'a' }, { name: 'b', labels: null }],
    };

    // Act
    const first = parseInventory(input);
    const labels = first.namespaces?.[0]?.labels;
    if (labels) labels.x = 'y';
    const second = parseInventory(input);

    // Assess
    expect(first.namespaces?.[1]?.labels).toEqual({});
    expect(second.namespaces?.[0]?.labels).toEqual({});
  });

  it('keeps spec_facts as sent and an absent one as unknown (null)', () => {
    // Prepare
    const input = message();
    const facts = input.workloads[0].spec_facts;
    delete input.workloads[1].spec_facts;

    // Act
    const inventory = parseInventory(input);

    // Assess
    expect(inventory.workloads?.[0]?.spec_facts).toEqual(facts);
    expect(inventory.workloads?.[1]?.spec_facts).toBeNull();
  });

  it('reads null lists inside spec_facts as empty, as a Go agent sends them', () => {
    // Prepare
    const input = message();
    const facts = input.workloads[0].spec_facts;
    facts.containers[0].env_names = null;
    facts.containers[0].volume_refs = null;

    // Act
    const inventory = parseInventory(input);

    // Assess
    const container = inventory.workloads?.[0]?.spec_facts?.containers[0];
    expect(container?.env_names).toEqual([]);
    expect(container?.volume_refs).toEqual([]);
  });

  it('does not modify its input', () => {
    // Prepare
    const input = message();
    input.pods[0].labels = null;
    const before = JSON.stringify(input);

    // Act
    parseInventory(input);

    // Assess
    expect(JSON.stringify(input)).toBe(before);
  });

  it('throws a rejection carrying the inventory_rejected code and the zod cause', () => {
    // Prepare
    const input = { ...message(), timestamp: 7 };

    // Act
    let error: unknown;
    try {
      parseInventory(input);
    } catch (err) {
      error = err;
    }

    // Assess
    expect(error).toBeInstanceOf(RejectedInventoryError);
    expect((error as RejectedInventoryError).code).toBe('inventory_rejected');
    expect((error as RejectedInventoryError).status).toBe(422);
    expect((error as RejectedInventoryError).cause).toBeDefined();
  });
});

describe('formatIssues', () => {
  it('joins path and rule, with array indexes in brackets', () => {
    // Prepare
    const input = message();
    input.workloads[3].containers[0].ports[1].container_port = 'http';
    const result = inventorySchema.safeParse(input);

    // Act
    const text = result.success ? '' : formatIssues(result.error, 1);

    // Assess
    expect(text).toMatch(
      /^workloads\[3\]\.containers\[0\]\.ports\[1\]\.container_port: /,
    );
  });
});

describe('parseInventoryJson', () => {
  it('parses a UTF-8 JSON buffer', () => {
    // Prepare
    const generated = generateInventory({ size: 'small' });
    const body = Buffer.from(JSON.stringify(generated), 'utf8');

    // Act
    const inventory: Inventory = parseInventoryJson(body);

    // Assess
    expect(inventory).toEqual(generated);
  });

  it('refuses a body that is not JSON with a clear reason', () => {
    // Prepare
    const body = '{"type": "kubernetes", "schema_version": 1,';

    // Act
    const reason = reasonOf(() => parseInventoryJson(body));

    // Assess
    expect(reason).toMatch(/^body: invalid JSON \(.+\)$/);
  });

  it('refuses a body that is not UTF-8', () => {
    // Prepare
    const body = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);

    // Act
    const reason = reasonOf(() => parseInventoryJson(body));

    // Assess
    expect(reason).toBe('body: not valid UTF-8');
  });

  it('refuses a valid JSON body that breaks the contract, naming the field', () => {
    // Prepare
    const input = message();
    input.workloads[3].replicas_desired = '3';
    const body = JSON.stringify(input);

    // Act
    const reason = reasonOf(() => parseInventoryJson(body));

    // Assess
    expect(reason).toBe('workloads[3].replicas_desired: expected an integer');
  });
});
