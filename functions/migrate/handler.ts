/**
 * Applies the migrations at deploy time (a CDK trigger runs it once per
 * deploy, before the functions that need the schema). The SQL files are
 * copied next to the bundle (`migrations/` beside `index.mjs`, i.e.
 * /var/task/migrations); from the source tree the repository's own
 * `migrations/` is used. Fails the deploy when a migration fails.
 */
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { resolveDatabaseUrl } from '../../shared/db/connect.ts';
import { type MigrateResult, migrate } from '../../shared/db/migrate.ts';
import { findMigrationsDir } from '../../shared/db/migrations-dir.ts';
import { logger } from '../../shared/observability/logger.ts';

const config = getConfig();

export const handler = middy<unknown, MigrateResult>()
  .use(injectLambdaContext(logger, { resetKeys: true }))
  .handler(async () => {
    const dir = findMigrationsDir([
      new URL('./migrations', import.meta.url),
      'migrations',
    ]);
    const result = await migrate(await resolveDatabaseUrl(config), dir);
    logger.info('migrations applied', {
      dir,
      applied: result.applied,
      alreadyApplied: result.alreadyApplied,
    });
    return result;
  });
