/**
 * The admin function: `aws lambda invoke` runs the same code as
 * `npm run tenant` and `npm run grant` inside the VPC (shared/tenancy/admin.ts
 * has the commands). It connects with its own login, which may change only
 * tenants and grants. A bad command fails the invocation with a message
 * that lists what is wrong (logged by the shared middleware stack).
 */
import middy from '@middy/core';
import { getDb } from '../../shared/db/process-pool.ts';
import { logger } from '../../shared/observability/logger.ts';
import { observed } from '../../shared/observability/middleware.ts';
import { traced } from '../../shared/observability/tracer.ts';
import {
  type AdminResult,
  runAdminCommand,
} from '../../shared/tenancy/admin.ts';

/** One small pool per cold start, with this function's own login. */
const database = () =>
  getDb({ applicationName: 'admin', login: 'admin', max: 1 });

export const handler = middy<unknown, AdminResult>()
  .use(traced())
  .use(observed())
  .handler(async (event) => {
    const result = await runAdminCommand(await database(), event);
    // webhook-add's result holds the source's secret: only its id is logged.
    logger.info(
      'admin command done',
      result.command === 'webhook-add'
        ? { command: result.command, id: result.id }
        : { ...result },
    );
    return result;
  });
