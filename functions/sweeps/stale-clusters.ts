/**
 * The stale-cluster sweep, every minute (EventBridge schedule; a timer in
 * the local stack).
 */
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { getDb } from '../../shared/db/process-pool.ts';
import { observed } from '../../shared/observability/middleware.ts';
import { traced } from '../../shared/observability/tracer.ts';
import {
  markStaleClusters,
  type StaleSweepResult,
} from '../../shared/sweeps/stale-clusters.ts';

const config = getConfig();

export const handler = middy<unknown, StaleSweepResult>()
  .use(traced())
  .use(observed())
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
