/**
 * The stale-cluster sweep, every minute (EventBridge schedule; a timer in
 * the local stack).
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/db/process-pool.ts';
import { logger } from '../../shared/observability/logger.ts';
import { metrics } from '../../shared/observability/metrics.ts';
import {
  markStaleClusters,
  type StaleSweepResult,
} from '../../shared/sweeps/stale-clusters.ts';

const config = getConfig();

export const handler = middy<unknown, StaleSweepResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .use(logMetrics(metrics))
  .handler(async () =>
    markStaleClusters(
      await getDb({
        applicationName: 'k8s-inventory-stale-clusters',
        login: 'sweeps',
      }),
      {
        staleMinutes: config.STALE_CLUSTER_MINUTES,
      },
    ),
  );
