/**
 * The retention sweep, hourly (EventBridge schedule; a timer in the local
 * stack, which also runs it at start): Kubernetes events past
 * EVENT_RETENTION_HOURS, event history past EVENT_HISTORY_DAYS, change rows
 * and alert groups past CHANGE_RETENTION_DAYS, and live-read audit rows past
 * AUDIT_RETENTION_DAYS.
 */
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/db/process-pool.ts';
import { expireAudit } from '../../shared/live/audit.ts';
import { logger } from '../../shared/observability/logger.ts';
import { observed } from '../../shared/observability/middleware.ts';
import { traced } from '../../shared/observability/tracer.ts';
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
  RetentionSweepResult & {
    auditDeleted: number;
    changeRetention: ChangeRetentionResult;
  }
>()
  .use(traced())
  .use(observed())
  .handler(async () => {
    const db = await getDb({
      applicationName: 'k8s-inventory-event-retention',
      login: 'sweeps',
    });
    const events = await expireEvents(db, {
      retentionHours: config.EVENT_RETENTION_HOURS,
      historyDays: config.EVENT_HISTORY_DAYS,
    });
    const changeRetention = await expireChanges(db, {
      retentionDays: config.CHANGE_RETENTION_DAYS,
    });
    const auditDeleted = await expireAudit(db, config.AUDIT_RETENTION_DAYS);
    logger.info('expired live-read audit rows deleted', {
      deleted: auditDeleted,
      retentionDays: config.AUDIT_RETENTION_DAYS,
    });
    return { ...events, changeRetention, auditDeleted };
  });
