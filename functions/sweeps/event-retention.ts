/**
 * The retention sweep, hourly (EventBridge schedule; a timer in the local
 * stack): Kubernetes events past EVENT_RETENTION_HOURS, and live-read audit
 * rows past AUDIT_RETENTION_DAYS.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/http/context.ts';
import { expireAudit } from '../../shared/live/audit.ts';
import { logger } from '../../shared/observability/logger.ts';
import { metrics } from '../../shared/observability/metrics.ts';
import {
  expireEvents,
  type RetentionSweepResult,
} from '../../shared/sweeps/event-retention.ts';

const config = getConfig();

export const handler = middy<
  unknown,
  RetentionSweepResult & { auditDeleted: number }
>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics))
  .handler(async () => {
    const db = await getDb();
    const events = await expireEvents(db, {
      retentionHours: config.EVENT_RETENTION_HOURS,
    });
    const auditDeleted = await expireAudit(db, config.AUDIT_RETENTION_DAYS);
    logger.info('expired live-read audit rows deleted', {
      deleted: auditDeleted,
      retentionDays: config.AUDIT_RETENTION_DAYS,
    });
    return { ...events, auditDeleted };
  });
