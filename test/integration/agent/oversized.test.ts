import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type SpawnedNatsServer,
  spawnNatsServer,
} from '../../../infra/local/nats-server.ts';
import { createAgentMetrics } from '../../../shared/agent/metrics.ts';
import {
  encodeInventory,
  publishInventory,
  withoutSpecFacts,
} from '../../../shared/agent/publish.ts';
import { buildInventory } from '../../../shared/collector/collect.ts';
import {
  type InventoryInput,
  parseInventory,
} from '../../../shared/wire/inventory.ts';
import { inventorySubject } from '../../../shared/wire/subject.ts';
import { allRealObjects } from '../../helpers/real-fixtures.ts';

/** The server's max_payload: well under what the planted inventories need. */
const MAX_PAYLOAD = 32 * 1024;
const STREAM = 'EVENTS';

let dir: string;
let server: SpawnedNatsServer;
let nc: NatsConnection;

/** Random, so gzip cannot shrink it: `n` distinct 36-character names. */
const randomNames = (n: number) =>
  Array.from({ length: n }, () => randomUUID());

function fixturesMessage(agentId: string): InventoryInput {
  return buildInventory(allRealObjects(), {
    agentId,
    agentVersion: 'v0.9.0',
    timestamp: new Date().toISOString(),
    clusterName: 'oversized',
  });
}

/** Spec facts too big for the server; the rest of the message is small. */
function withHugeFacts(message: InventoryInput): InventoryInput {
  const [first, ...rest] = message.workloads ?? [];
  // The input type leaves spec_facts open; the collector built it whole.
  const facts = first?.spec_facts as
    | { containers: Record<string, unknown>[] }
    | null
    | undefined;
  if (!first || !facts?.containers[0]) {
    throw new Error('the fixtures have no workload with spec facts');
  }
  const container = { ...facts.containers[0], env_names: randomNames(2000) };
  return {
    ...message,
    workloads: [
      {
        ...first,
        spec_facts: { ...facts, containers: [container] },
      },
      ...rest,
    ],
  };
}

/** Too big even without facts: thousands of random node labels. */
function withHugeNodes(message: InventoryInput): InventoryInput {
  const [first, ...rest] = message.nodes ?? [];
  if (!first) throw new Error('the fixtures have no node');
  const labels = Object.fromEntries(randomNames(2000).map((k) => [k, k]));
  return { ...message, nodes: [{ ...first, labels }, ...rest] };
}

function recorder() {
  const warnings: { message: unknown; extra?: unknown }[] = [];
  return {
    warnings,
    logger: {
      warn: (message: unknown, ...extra: unknown[]) => {
        warnings.push({ message, extra: extra[0] });
      },
    },
  };
}

async function lastOn(subject: string) {
  const jsm = await jetstreamManager(nc);
  const stored = await jsm.streams.getMessage(STREAM, {
    last_by_subj: subject,
  });
  return stored === null
    ? undefined
    : parseInventory(JSON.parse(gunzipSync(stored.data).toString()));
}

async function counter(
  metrics: ReturnType<typeof createAgentMetrics>,
  outcome: string,
) {
  const values = (await metrics.inventoryTooLarge.get()).values;
  return values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

/** Publishes as an agent would, with its own metrics and a log recorder. */
async function publishAsAgent(message: InventoryInput) {
  const subject = inventorySubject('acme', 'prod', message.agent_id);
  const metrics = createAgentMetrics();
  const { warnings, logger } = recorder();
  const result = await publishInventory(message, {
    nc,
    subject,
    metrics,
    logger,
  });
  return { result, subject, metrics, warnings };
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'nats-small-'));
  server = await spawnNatsServer({
    dataDir: dir,
    port: 0,
    maxPayload: String(MAX_PAYLOAD),
  });
  nc = await connect({ servers: server.url, name: 'oversized-test' });
  const jsm = await jetstreamManager(nc);
  await jsm.streams.add({ name: STREAM, subjects: ['proxima.*.*.*.*'] });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('publishing an inventory against the server max_payload', () => {
  it('publishes a message that fits with its spec facts and shows its size', async () => {
    // Prepare
    const message = fixturesMessage(randomUUID());

    // Act
    const { result, subject, metrics, warnings } =
      await publishAsAgent(message);

    // Assess
    expect(nc.info?.max_payload).toBe(MAX_PAYLOAD);
    expect(result).toMatchObject({ published: true, specFactsDropped: false });
    const stored = await lastOn(subject);
    expect(stored?.workloads?.some((w) => w.spec_facts !== null)).toBe(true);
    expect((await metrics.inventoryPayloadBytes.get()).values[0]?.value).toBe(
      encodeInventory(message).body.byteLength,
    );
    expect(warnings).toEqual([]);
    expect(await counter(metrics, 'spec_facts_dropped')).toBe(0);
  });

  it('drops spec_facts from every workload and publishes the rest once more when the message is over', async () => {
    // Prepare
    const message = withHugeFacts(fixturesMessage(randomUUID()));
    const full = encodeInventory(message).body.byteLength;
    expect(full).toBeGreaterThan(MAX_PAYLOAD);
    expect(
      encodeInventory(withoutSpecFacts(message)).body.byteLength,
    ).toBeLessThan(MAX_PAYLOAD);

    // Act
    const { result, subject, metrics, warnings } =
      await publishAsAgent(message);

    // Assess
    expect(result).toMatchObject({ published: true, specFactsDropped: true });
    const stored = await lastOn(subject);
    expect(stored?.workloads?.length).toBe(message.workloads?.length);
    expect(stored?.workloads?.every((w) => w.spec_facts === null)).toBe(true);
    expect(stored?.pods?.length).toBe(message.pods?.length);
    expect(await counter(metrics, 'spec_facts_dropped')).toBe(1);
    expect(await counter(metrics, 'inventory_dropped')).toBe(0);
    expect((await metrics.inventoryPayloadBytes.get()).values[0]?.value).toBe(
      full,
    );
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.extra).toMatchObject({
      outcome: 'spec_facts_dropped',
      maxPayload: MAX_PAYLOAD,
      bytes: full,
    });
  });

  it('publishes nothing when the message is still over without its facts', async () => {
    // Prepare
    const message = withHugeNodes(withHugeFacts(fixturesMessage(randomUUID())));
    expect(
      encodeInventory(withoutSpecFacts(message)).body.byteLength,
    ).toBeGreaterThan(MAX_PAYLOAD);

    // Act
    const { result, subject, metrics, warnings } =
      await publishAsAgent(message);

    // Assess
    expect(result).toMatchObject({
      published: false,
      maxPayload: MAX_PAYLOAD,
    });
    expect(await lastOn(subject)).toBeUndefined();
    expect(await counter(metrics, 'inventory_dropped')).toBe(1);
    expect(await counter(metrics, 'spec_facts_dropped')).toBe(0);
    expect(warnings.map((w) => w.extra)).toEqual([
      expect.objectContaining({ outcome: 'inventory_dropped' }),
    ]);
    expect(nc.isClosed()).toBe(false);
  });
});
