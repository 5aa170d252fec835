/**
 * The event retention sweep, hourly (EventBridge schedule; a timer in the
 * local stack, which also runs it at start).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/http/context.ts';
import { logger } from '../../shared/observability/logger.ts';
import { metrics } from '../../shared/observability/metrics.ts';
import {
  expireEvents,
  type RetentionSweepResult,
} from '../../shared/sweeps/event-retention.ts';

const config = getConfig();

export const handler = middy<unknown, RetentionSweepResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics))
  .handler(async () =>
    expireEvents(await getDb(), {
      retentionHours: config.EVENT_RETENTION_HOURS,
      historyDays: config.EVENT_HISTORY_DAYS,
    }),
  );
