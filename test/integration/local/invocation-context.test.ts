/**
 * Each invocation in the local stack logs with its own Lambda context: a
 * failed API request names its own function and request id, not those of
 * the sync that ran before it in the same process.
 */
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  invoke,
  LOCAL_FUNCTION_NAMES,
  lambdaContext,
} from '../../../infra/local/lambda-context.ts';
import { setMetricsStore } from '../../../shared/metrics/context.ts';
import { logger } from '../../../shared/observability/logger.ts';
import { observed } from '../../../shared/observability/middleware.ts';
import {
  insertClient,
  insertCluster,
  insertEnvironment,
} from '../../helpers/api-fixtures.ts';
import { startTestApi, type TestApi } from '../../helpers/api-server.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { captureStdout } from '../sweeps/support.ts';

describe('the local stack: one Lambda context per invocation', () => {
  let database: TestDatabase;
  let api: TestApi;
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
  });
  afterAll(async () => {
    setMetricsStore('reset');
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
});
