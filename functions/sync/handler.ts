/**
 * The sync worker: an SQS FIFO event of inventory snapshots, applied one
 * record at a time; failures come back as `batchItemFailures` (CDK sets
 * `reportBatchItemFailures`).
 */
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { processBatch } from '../../shared/ingest/process-record.ts';
import { getSyncDeps } from '../../shared/ingest/sync-deps.ts';
import { observed } from '../../shared/observability/middleware.ts';
import { traced } from '../../shared/observability/tracer.ts';

export const handler = middy<SQSEvent, SQSBatchResponse>()
  .use(traced())
  .use(observed())
  .handler(async (event, context) =>
    processBatch(event, await getSyncDeps(), context),
  );
