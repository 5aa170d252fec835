/**
 * The traces and timings of one message: `k8s.process_message` wraps the
 * whole of it (decoding, validation, the tenant lookup, the transaction),
 * refusals included, and every settled message is timed and counted with
 * its outcome.
 */
import { randomUUID } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import type { SQSRecord } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../../functions/sync/handler.ts';
import { lambdaContext } from '../../../infra/local/lambda-context.ts';
import { QueueAttribute } from '../../../shared/ingest/queue-message.ts';
import { setSyncDeps } from '../../../shared/ingest/sync-deps.ts';
import { generateInventory } from '../../fixtures/generate.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { sqsRecordOf } from '../../helpers/sqs-record.ts';
import { captureStdout } from '../sweeps/support.ts';

const recordOf = sqsRecordOf;

interface SpanEvent {
  at: 'open' | 'close';
  name: string;
}

describe('k8s.process_message and the sync metrics', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  const spans: SpanEvent[] = [];
  const s3 = new S3Client({
    region: 'us-east-1',
    endpoint: 'http://127.0.0.1:9',
    credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    maxAttempts: 1,
  });

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    setSyncDeps({
      db: database.as('sync').db,
      s3,
      timeoutMs: 60_000,
      eventRetentionHours: 24,
      span: async (name, fn) => {
        spans.push({ at: 'open', name });
        try {
          return await fn();
        } finally {
          spans.push({ at: 'close', name });
        }
      },
    });
  });
  afterAll(async () => {
    setSyncDeps(undefined);
    s3.destroy();
    await database.drop();
  });

  function message(body?: string) {
    const agentId = randomUUID();
    const inventory = generateInventory({
      seed: agentId,
      agentId,
      timestamp: new Date(Date.now() - 60_000).toISOString(),
      nodes: 2,
      namespaces: 1,
      workloadsPerNamespace: 1,
      podsPerWorkload: 1,
    });
    const subject = `proxima.${tenant.clientSlug}.${tenant.envSlug}.${agentId}.kubernetes`;
    return recordOf(subject, body ?? JSON.stringify(inventory));
  }

  async function run(record: SQSRecord) {
    spans.length = 0;
    const out = captureStdout();
    try {
      await handler(
        { Records: [record] },
        lambdaContext('sync', { timeoutMs: 90_000 }),
      );
    } finally {
      out.restore();
    }
    return out.json().filter((line) => '_aws' in line);
  }

  it('wraps every step of an applied message in k8s.process_message', async () => {
    // Act
    const emf = await run(message());

    // Assert: opened first, closed last, every sync step inside.
    expect(spans[0]).toEqual({ at: 'open', name: 'k8s.process_message' });
    expect(spans.at(-1)).toEqual({ at: 'close', name: 'k8s.process_message' });
    const inner = spans.slice(1, -1).map((s) => s.name);
    for (const name of [
      'k8s.upsert_cluster',
      'k8s.sync_nodes',
      'k8s.sync_namespaces',
      'k8s.sync_workloads',
      'worker.KubernetesPruneUnseen',
    ]) {
      expect(inner).toContain(name);
    }
    expect(inner).not.toContain('k8s.process_message');
    // Per-kind spans never overlap: each closes before the next opens.
    let open: string | undefined;
    for (const event of spans.slice(1, -1)) {
      if (event.at === 'open') {
        expect(open).toBeUndefined();
        open = event.name;
      } else {
        expect(event.name).toBe(open);
        open = undefined;
      }
    }
    const synced = emf.filter((l) => 'proxima_k8s_clusters_synced_total' in l);
    expect(synced.map((l) => l.outcome)).toEqual(['applied']);
    const timed = emf.filter((l) => 'proxima_k8s_sync_duration_seconds' in l);
    expect(timed.map((l) => l.outcome)).toEqual(['applied']);
  });

  it('times and counts a refused message, inside its span', async () => {
    // Act
    const emf = await run(message('{"type":'));

    // Assert
    expect(spans.map((s) => s.name)).toEqual([
      'k8s.process_message',
      'k8s.process_message',
    ]);
    const synced = emf.filter((l) => 'proxima_k8s_clusters_synced_total' in l);
    expect(synced.map((l) => l.outcome)).toEqual(['rejected']);
    const timed = emf.filter((l) => 'proxima_k8s_sync_duration_seconds' in l);
    expect(timed.map((l) => l.outcome)).toEqual(['rejected']);
    expect(timed[0]?.proxima_k8s_sync_duration_seconds).toBeGreaterThan(0);
  });

  it('times and counts a not-newer message as skipped', async () => {
    // Prepare: the same snapshot twice.
    const first = message();
    await run(first);
    const again = recordOf(
      first.messageAttributes[QueueAttribute.subject]?.stringValue ?? '',
      first.body,
    );

    // Act
    const emf = await run(again);

    // Assert
    const synced = emf.filter((l) => 'proxima_k8s_clusters_synced_total' in l);
    expect(synced.map((l) => l.outcome)).toEqual(['skipped_not_newer']);
  });
});
