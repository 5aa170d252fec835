/**
 * Each invocation in the local stack logs with its own Lambda context: a
 * failed API request names its own function and request id, not those of
 * the sync that ran before it, or of the sync in flight beside it, in the
 * same process.
 */
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  invoke,
  LOCAL_FUNCTION_NAMES,
  lambdaContext,
} from '../../../infra/local/lambda-context.ts';
import { startPoller } from '../../../infra/local/poller.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import type { MetricsStore } from '../../../shared/metrics/store.ts';
import { logger } from '../../../shared/observability/logger.ts';
import { observed } from '../../../shared/observability/middleware.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { startSqs, type TestSqs } from '../../helpers/sqs.ts';
import { captureStdout } from '../sweeps/support.ts';

describe('the local stack: one Lambda context per invocation', () => {
  let database: TestDatabase;
  let api: TestApi;
  let sqs: TestSqs;
  let clusterId: string;
  const email = 'operator@example.com';

  beforeAll(async () => {
    database = await createTestDatabase();
    const clientId = await insertClient(database.db, 'ctx-client');
    const environmentId = await insertEnvironment(
      database.db,
      clientId,
      'ctx-env',
    );
    clusterId = await insertCluster(database.db, {
      clientId,
      environmentId,
      name: 'ctx-cluster',
    });
    await database.db.query(
      `insert into user_grants (email, role, client_id) values ($1, 'operator', $2)`,
      [email, clientId],
    );
    api = await startTestApi(database.db);
    sqs = await startSqs();
  });
  afterAll(async () => {
    setMetricsStore('reset');
    await sqs?.stop();
    await api?.close();
    await database?.drop();
  });

  it("logs a failed API request with its own function name, not the last sync's", async () => {
    // Prepare: a sync invocation ran first, through the same middleware
    // stack as the real sync handler.
    setMetricsStore(undefined); // the metrics route then fails: 503
    const token = await api.token(email);
    const sync = middy<unknown, void>()
      .use(observed())
      .handler(async () => {
        logger.info('sync step');
      });
    const syncContext: Context = lambdaContext(LOCAL_FUNCTION_NAMES.sync);
    const out = captureStdout();

    // Act
    let status: number;
    try {
      await invoke(sync, {}, syncContext);
      const response = await api.get(
        `/api/v1/clusters/${clusterId}/metrics/cpu_by_node?start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z`,
        token,
      );
      status = response.status;
    } finally {
      out.restore();
    }

    // Assess
    expect(status).toBe(503);
    const lines = out.json();
    expect(lines.find((l) => l.message === 'sync step')).toMatchObject({
      function_name: 'k8s-inventory-sync',
      function_request_id: syncContext.awsRequestId,
    });
    const failed = lines.find((l) => l.message === 'request failed');
    expect(failed).toMatchObject({
      level: 'ERROR',
      function_name: 'k8s-inventory-api-get-cluster-metrics',
    });
    expect(failed?.function_request_id).not.toBe(syncContext.awsRequestId);
  });

  it('keeps each line with its own invocation while an API request and a sync overlap', {
    timeout: 60_000,
  }, async () => {
    // Prepare: an API request that fails slowly (its metrics store answers
    // only when let go, with an error: a 500, logged), and a sync handed its
    // batch by the local poller, on the sync's middleware stack, that logs
    // before and after the request fails. The order is forced: request in
    // flight, sync started, request failed and answered, sync finished.
    const storeEntered = deferred();
    const storeReleased = deferred();
    const failingStore: MetricsStore = {
      queryRange: async () => {
        storeEntered.resolve();
        await storeReleased.promise;
        throw new Error('metrics store down');
      },
      queryInstant: async () => [],
    };
    setMetricsStore(failingStore);
    const token = await api.token(email);
    const syncStarted = deferred();
    const requestAnswered = deferred();
    const syncDone = deferred();
    let syncContext: Context | undefined;
    const sync = middy<SQSEvent, SQSBatchResponse>()
      .use(observed())
      .handler(async (_event, context) => {
        syncContext = context;
        logger.info('sync started');
        syncStarted.resolve();
        await requestAnswered.promise;
        logger.info('sync finished');
        syncDone.resolve();
        return { batchItemFailures: [] };
      });
    const out = captureStdout();
    let status: number;
    try {
      const poller = await startPoller({
        sqs: sqs.sqs,
        queueUrl: sqs.queueUrl,
        handler: sync,
        concurrency: 1,
        waitTimeSeconds: 1,
      });
      try {
        // Act
        const response = api.get(
          `/api/v1/clusters/${clusterId}/metrics/cpu_by_node?start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z`,
          token,
        );
        await storeEntered.promise;
        await sqs.sqs.send(
          new SendMessageCommand({
            QueueUrl: sqs.queueUrl,
            MessageBody: '{}',
            MessageGroupId: 'ctx-cluster',
            MessageDeduplicationId: 'ctx-snapshot',
          }),
        );
        await syncStarted.promise;
        storeReleased.resolve();
        status = (await response).status;
        requestAnswered.resolve();
        await syncDone.promise;
      } finally {
        storeReleased.resolve();
        requestAnswered.resolve();
        await poller.stop();
      }
    } finally {
      out.restore();
    }

    // Assess
    expect(status).toBe(500);
    const lines = out.json();
    const syncLines = lines.filter((l) =>
      ['sync started', 'sync finished'].includes(String(l.message)),
    );
    expect(syncLines).toHaveLength(2);
    for (const line of syncLines) {
      expect(line).toMatchObject({
        function_name: LOCAL_FUNCTION_NAMES.sync,
        function_request_id: syncContext?.awsRequestId,
      });
    }
    const failed = lines.filter((l) => l.message === 'request failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      level: 'ERROR',
      function_name: 'k8s-inventory-api-get-cluster-metrics',
      function_request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
    });
    expect(failed[0]?.function_request_id).not.toBe(syncContext?.awsRequestId);
    // Every line that names a request id names one of the two invocations.
    const invocations = new Set([
      syncContext?.awsRequestId,
      failed[0]?.function_request_id,
    ]);
    for (const line of lines) {
      if (line.function_request_id === undefined) continue;
      expect(invocations, String(line.message)).toContain(
        line.function_request_id,
      );
    }
  });

  it('logs work an invocation left behind, once it has ended, with no invocation named', async () => {
    // Prepare: a handler that starts a timer outliving it (as a pool's or a
    // client's callbacks do) and logs from it.
    const late = deferred();
    const handler = middy<unknown, void>()
      .use(observed())
      .handler(async () => {
        logger.info('in the invocation');
        setTimeout(() => {
          logger.info('after the invocation');
          late.resolve();
        }, 20);
      });
    const context = lambdaContext(LOCAL_FUNCTION_NAMES.staleClusters);
    const out = captureStdout();

    // Act
    try {
      await invoke(handler, {}, context);
      await late.promise;
    } finally {
      out.restore();
    }

    // Assess
    const lines = out.json();
    expect(lines.find((l) => l.message === 'in the invocation')).toMatchObject({
      function_name: LOCAL_FUNCTION_NAMES.staleClusters,
      function_request_id: context.awsRequestId,
    });
    const after = lines.find((l) => l.message === 'after the invocation');
    expect(after).toBeDefined();
    expect(after).not.toHaveProperty('function_name');
    expect(after).not.toHaveProperty('function_request_id');
  });
});

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}
