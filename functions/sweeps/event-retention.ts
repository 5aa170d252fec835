/**
 * The retention sweep, hourly (EventBridge schedule; a timer in the local
 * stack): expired Kubernetes events, then change rows and alert groups past
 * CHANGE_RETENTION_DAYS.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/http/context.ts';
import { logger } from '../../shared/observability/logger.ts';
import { metrics } from '../../shared/observability/metrics.ts';
import {
  type ChangeRetentionResult,
  expireChanges,
} from '../../shared/sweeps/change-retention.ts';
import {
  expireEvents,
  type RetentionSweepResult,
} from '../../shared/sweeps/event-retention.ts';

const config = getConfig();

export const handler = middy<
  unknown,
  RetentionSweepResult & { changeRetention: ChangeRetentionResult }
>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics))
  .handler(async () => {
    const db = await getDb();
    const events = await expireEvents(db, {
      retentionHours: config.EVENT_RETENTION_HOURS,
    });
    const changeRetention = await expireChanges(db, {
      retentionDays: config.CHANGE_RETENTION_DAYS,
    });
    return { ...events, changeRetention };
  });
