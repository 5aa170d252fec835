import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/sync/handler.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { query, queryMaybeOne } from '../../../shared/db/pool.ts';
import {
  CLAMPED_MESSAGE,
  OUT_OF_TIME_MESSAGE,
  type ProcessedRecord,
} from '../../../shared/ingest/process-record.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import { setSyncDeps } from '../../../shared/ingest/sync-deps.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { sqsRecordOf } from '../../helpers/sqs-record.ts';
import { captureStdout } from '../sweeps/support.ts';

// biome-ignore lint/suspicious/noExplicitAny: a message spoiled at will, as a faulty agent could
type Msg = Record<string, any>;

/** The sync's context as deployed: a 90 s timeout over the 60 s bound. */
const syncContext = () => lambdaContext('sync', { timeoutMs: 90_000 });

const recordOf = sqsRecordOf;

/** The parts of a generated inventory the refusal cases spoil. */
interface Spoilable {
  pods: [{ restart_count?: number }];
  nodes: [{ uid?: string }, { uid?: string }];
}

describe('sync handler', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  const processed: ProcessedRecord[] = [];
  // Nothing listens there: any claim check read is a transient failure.
  const deadS3 = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    forcePathStyle: true,
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    setSyncDeps({
      // The sync function's login in AWS (the writer's), never the owner.
      db: database.as('sync').db,
      s3: deadS3,
      timeoutMs: 60_000,
      eventRetentionHours: 24,
      onProcessed: (p) => processed.push(p),
    });
  });
  afterAll(async () => {
    setSyncDeps(undefined);
    deadS3.destroy();
    await database.drop();
  });

  function valid(timestamp = new Date(Date.now() - 60_000)) {
    const agentId = randomUUID();
    const inventory = generateInventory({
      seed: agentId,
      agentId,
      clusterName: `c-${agentId.slice(0, 8)}`,
      timestamp: timestamp.toISOString(),
      nodes: 2,
      namespaces: 1,
      workloadsPerNamespace: 1,
      podsPerWorkload: 1,
    });
    const subject = `proxima.${tenant.clientSlug}.${tenant.envSlug}.${agentId}.kubernetes`;
    return { agentId, record: recordOf(subject, JSON.stringify(inventory)) };
  }

  const clusterOf = (agentId: string) =>
    queryMaybeOne(database.db, 'select id from clusters where agent_id = $1', [
      agentId,
    ]);

  it('fails a record that hit a transient error and the later records of its group, and runs the other groups’ records', async () => {
    // Prepare: two clusters in one batch, B's first record unreadable.
    const first = valid();
    const broken = valid();
    broken.record.messageAttributes[QueueAttribute.claimCheck] = {
      dataType: 'String',
      stringValue: 's3://claims/inventory/somewhere',
      stringListValues: [],
      binaryListValues: [],
    };
    const brokenSubject =
      broken.record.messageAttributes[QueueAttribute.subject]!.stringValue!;
    const sameGroupLater = recordOf(
      brokenSubject,
      JSON.stringify({
        ...(JSON.parse(valid().record.body) as Msg),
        agent_id: broken.agentId,
      }),
    );
    const later = valid();
    const event: SQSEvent = {
      Records: [first.record, broken.record, sameGroupLater, later.record],
    };

    // Act
    const response = await handler(event, syncContext());

    // Assess
    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: broken.record.messageId },
      { itemIdentifier: sameGroupLater.messageId },
    ]);
    expect(await clusterOf(first.agentId)).toBeDefined();
    expect(await clusterOf(broken.agentId)).toBeUndefined();
    expect(await clusterOf(later.agentId)).toBeDefined();
  });

  it.each([
    ['invalid JSON', () => '{"type":', /invalid JSON/],
    [
      'a message of another type',
      (m: Msg) => ({ ...m, type: 'host' }),
      /^type:/,
    ],
    [
      'a newer schema version',
      (m: Msg) => ({ ...m, schema_version: 2 }),
      /schema_version 2 is not supported/,
    ],
    [
      'a bad timestamp',
      (m: Msg) => ({ ...m, timestamp: 'yesterday' }),
      /^timestamp:/,
    ],
    [
      'a string where an integer is expected',
      (m: Msg) => {
        (m.workloads as Msg[])[0]!.replicas_desired = 'three';
        return m;
      },
      /workloads\[0\]\.replicas_desired: expected an integer/,
    ],
    [
      'a row without its name',
      (m: Msg) => {
        delete (m.pods as Msg[])[0]!.name;
        return m;
      },
      /pods\[0\]\.name/,
    ],
    [
      'an agent id that is not the subject’s',
      (m: Msg) => ({ ...m, agent_id: randomUUID() }),
      /agent_id/,
    ],
  ] as const)(
    'refuses %s: recorded with a reason naming the field, nothing stored',
    async (_case, spoil, reason) => {
      // Prepare
      const { agentId, record } = valid();
      const message = JSON.parse(record.body) as Msg;
      const body = spoil(message);
      record.body = typeof body === 'string' ? body : JSON.stringify(body);
      const out = captureStdout();

      // Act
      let response: Awaited<ReturnType<typeof handler>>;
      try {
        response = await handler({ Records: [record] }, syncContext());
      } finally {
        out.restore();
      }

      // Assess
      expect(response.batchItemFailures).toEqual([]);
      expect(await clusterOf(agentId)).toBeUndefined();
      const rows = await query<{ reason: string }>(
        database.db,
        'select reason from ingest_rejections where agent_id = $1',
        [agentId],
      );
      expect(rows).toHaveLength(1);
      expect(rows[0]?.reason).toMatch(reason);
    },
  );

  it('lets a refused record succeed, records why, and goes on with the batch', async () => {
    // Prepare
    const refused = valid();
    refused.record.body = '{"type":"kubernetes","schema_version":1}';
    const later = valid();
    const out = captureStdout();

    // Act
    let response: Awaited<ReturnType<typeof handler>>;
    try {
      response = await handler(
        { Records: [refused.record, later.record] },
        syncContext(),
      );
    } finally {
      out.restore();
    }

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    expect(await clusterOf(later.agentId)).toBeDefined();
    const rows = await query<{
      stage: string;
      agent_id: string;
      reason: string;
    }>(
      database.db,
      'select stage, agent_id, reason from ingest_rejections where agent_id = $1',
      [refused.agentId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.stage).toBe('sync');
    expect(rows[0]?.reason).toMatch(/agent_id/);
    const warn = out
      .json()
      .find((l) => l.message === 'inventory rejected' && l.level === 'WARN');
    expect(warn).toMatchObject({
      subject:
        refused.record.messageAttributes[QueueAttribute.subject]?.stringValue,
    });
    expect(JSON.stringify(warn)).not.toContain('schema_version');
  });

  it.each([
    [
      'a count past 32 bits (the wire schema)',
      (inv: Spoilable) => {
        inv.pods[0].restart_count = 3_000_000_000;
      },
      /^pods\[0\]\.restart_count: must be at most 2147483647$/,
    ],
    [
      'two nodes with one uid (PostgreSQL)',
      (inv: Spoilable) => {
        inv.nodes[1].uid = inv.nodes[0].uid;
      },
      /^nodes: the database refused two rows with the same key \(constraint \w+\)$/,
    ],
  ])(
    'refuses and records a snapshot with %s that PostgreSQL cannot store, and applies none of it',
    async (_, spoil, reason) => {
      // Prepare
      const refused = valid();
      const inventory = JSON.parse(refused.record.body);
      spoil(inventory);
      refused.record.body = JSON.stringify(inventory);
      const out = captureStdout();

      // Act
      let response: Awaited<ReturnType<typeof handler>>;
      try {
        response = await handler({ Records: [refused.record] }, syncContext());
      } finally {
        out.restore();
      }

      // Assess
      expect(response.batchItemFailures).toEqual([]);
      expect(await clusterOf(refused.agentId)).toBeUndefined();
      const rows = await query<{ reason: string }>(
        database.db,
        'select reason from ingest_rejections where agent_id = $1',
        [refused.agentId],
      );
      expect(rows.map((r) => r.reason)).toEqual([
        expect.stringMatching(reason),
      ]);
      expect(rows[0]?.reason).not.toContain('3000000000');
    },
  );

  it('logs a snapshot stamped in the future as clamped, and the sync with its counts and metrics', async () => {
    // Prepare
    const future = valid(new Date(Date.now() + 3_600_000));
    const out = captureStdout();

    // Act
    try {
      await handler({ Records: [future.record] }, syncContext());
    } finally {
      out.restore();
    }

    // Assess
    const lines = out.json();
    expect(lines.find((l) => l.message === CLAMPED_MESSAGE)).toMatchObject({
      level: 'WARN',
    });
    const synced = lines.find((l) => l.message === 'inventory synced');
    expect(synced).toMatchObject({ outcome: 'applied' });
    expect(synced?.clusterId).toEqual(expect.any(String));
    expect(synced?.kinds).toMatchObject({
      nodes: { received: 2, upserted: 2 },
    });
    const emf = lines.filter((l) => '_aws' in l);
    const names = emf.flatMap((l) => Object.keys(l));
    for (const name of [
      'proxima_k8s_clusters_synced_total',
      'proxima_k8s_sync_duration_seconds',
      'proxima_k8s_nodes_synced_total',
      'proxima_k8s_workloads_synced_total',
      'proxima_k8s_node_host_linkage_total',
      'proxima_k8s_spec_facts_not_newer_total',
      'proxima_k8s_change_records_total',
    ]) {
      expect(names).toContain(name);
    }
    const linkage = emf.filter(
      (l) => 'proxima_k8s_node_host_linkage_total' in l,
    );
    expect(linkage.map((l) => l.result).sort()).toEqual(['linked', 'unlinked']);
  });

  it('leaves the rest of a batch to the queue once too little time is left for a whole sync', async () => {
    // Prepare: 10 s left, less than the 60 s bound plus the margin.
    const first = valid();
    const second = valid();
    const third = valid();
    const context = {
      ...syncContext(),
      getRemainingTimeInMillis: () => 10_000,
    };
    const before = processed.length;
    const out = captureStdout();

    // Act
    let response: Awaited<ReturnType<typeof handler>>;
    try {
      response = await handler(
        { Records: [first.record, second.record, third.record] },
        context,
      );
    } finally {
      out.restore();
    }

    // Assess: the first record of an invocation always runs; the others
    // are not started, and come back from the queue.
    expect(response.batchItemFailures).toEqual([
      { itemIdentifier: second.record.messageId },
      { itemIdentifier: third.record.messageId },
    ]);
    expect(await clusterOf(first.agentId)).toBeDefined();
    expect(await clusterOf(second.agentId)).toBeUndefined();
    expect(await clusterOf(third.agentId)).toBeUndefined();
    expect(processed.slice(before).map((p) => p.messageId)).toEqual([
      first.record.messageId,
    ]);
    const warn = out
      .json()
      .find(
        (l) =>
          typeof l.message === 'string' &&
          l.message.startsWith(OUT_OF_TIME_MESSAGE),
      );
    expect(warn).toMatchObject({
      level: 'WARN',
      messageId: second.record.messageId,
      remainingMs: 10_000,
      neededMs: 65_000,
    });
  });

  it('runs every record of a batch while the invocation has room for each', async () => {
    // Prepare
    const records = [valid(), valid(), valid()];

    // Act
    const response = await handler(
      { Records: records.map((r) => r.record) },
      syncContext(),
    );

    // Assess
    expect(response.batchItemFailures).toEqual([]);
    for (const { agentId } of records) {
      expect(await clusterOf(agentId)).toBeDefined();
    }
  });
});
