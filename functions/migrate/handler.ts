/**
 * Applies the migrations at deploy time (a CDK trigger runs it once per
 * deploy, before the functions that need the schema), then, when
 * DATABASE_LOGIN_SECRETS names the application logins, creates the group
 * roles, the grants and each login with the password its secret holds
 * (shared/db/deploy.ts). The SQL files are copied next to the bundle
 * (`migrations/` beside `index.js`, i.e. $LAMBDA_TASK_ROOT/migrations);
 * from the source tree the repository's own `migrations/` (the cwd's) is
 * used. Fails the deploy
 * when any step fails.
 */
import { join } from 'node:path';
import middy from '@middy/core';
import { getConfig } from '../../shared/config.ts';
import { resolveDatabaseUrl } from '../../shared/db/connect.ts';
import {
  type DeployDatabaseResult,
  deployDatabase,
} from '../../shared/db/deploy.ts';
import { readLoginSecrets } from '../../shared/db/login-secrets.ts';
import { findMigrationsDir } from '../../shared/db/migrations-dir.ts';
import { assertGroupRoles } from '../../shared/db/roles.ts';
import { logger } from '../../shared/observability/logger.ts';
import { observed } from '../../shared/observability/middleware.ts';
import { traced } from '../../shared/observability/tracer.ts';

const config = getConfig();
const loginSecrets = config.DATABASE_LOGIN_SECRETS;
// An unknown group role fails the cold start, before anything is touched.
if (loginSecrets) assertGroupRoles(Object.keys(loginSecrets));

export const handler = middy<unknown, DeployDatabaseResult>()
  .use(traced())
  .use(observed())
  .handler(async () => {
    // LAMBDA_TASK_ROOT is where Lambda unpacked the bundle (a CommonJS
    // bundle has no import.meta.url to find it by).
    const taskRoot = config.LAMBDA_TASK_ROOT;
    const dir = findMigrationsDir([
      ...(taskRoot ? [join(taskRoot, 'migrations')] : []),
      'migrations',
    ]);
    const logins = loginSecrets
      ? await readLoginSecrets(loginSecrets, { region: config.AWS_REGION })
      : undefined;
    const result = await deployDatabase({
      url: await resolveDatabaseUrl(config),
      migrationsDir: dir,
      ...(logins ? { logins } : {}),
      onRetry: (info) =>
        logger.warn('database not reachable yet; retrying', { ...info }),
    });
    logger.info('migrations applied', {
      dir,
      applied: result.applied,
      alreadyApplied: result.alreadyApplied,
      connectAttempts: result.connectAttempts,
    });
    if (logins) {
      logger.info('database roles and grants applied', {
        logins: result.logins,
      });
    }
    return result;
  });
