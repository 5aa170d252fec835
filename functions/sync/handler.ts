/**
 * The sync worker: an SQS FIFO event of inventory snapshots, applied one
 * record at a time; failures come back as `batchItemFailures` (CDK sets
 * `reportBatchItemFailures`).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processBatch } from '../../shared/ingest/process-record.ts';
import { getSyncDeps } from '../../shared/ingest/sync-deps.ts';
import { logger } from '../../shared/observability/logger.ts';
import { metrics } from '../../shared/observability/metrics.ts';
import { tracer } from '../../shared/observability/tracer.ts';

export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(captureLambdaHandler(tracer, { captureResponse: false }))
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics))
  .handler(async (event, context) =>
    processBatch(event, await getSyncDeps(), context),
  );
