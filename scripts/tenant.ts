/**
 * `npm run tenant -- --client SLUG --environment SLUG [--client-name NAME]
 * [--environment-name NAME]`: creates the client and environment when
 * missing (idempotent) and prints their ids. Uses DATABASE_URL, else the
 * local stack's database.
 */
import { parseArgs } from 'node:util';
import { getConfig } from '../shared/config.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool } from '../shared/db/pool.ts';
import { ensureTenant } from '../shared/tenancy/tenants.ts';

const USAGE =
  'usage: npm run tenant -- --client SLUG --environment SLUG [--client-name NAME] [--environment-name NAME]';

const { values } = parseArgs({
  options: {
    client: { type: 'string' },
    environment: { type: 'string' },
    'client-name': { type: 'string' },
    'environment-name': { type: 'string' },
  },
  strict: true,
});

if (!values.client || !values.environment) {
  console.error(USAGE);
  process.exit(2);
}

const db = createPool({
  connectionString: localDatabaseUrl(getConfig()),
  max: 1,
  applicationName: 'tenant',
});
try {
  const tenant = await ensureTenant(db, {
    clientSlug: values.client,
    envSlug: values.environment,
    ...(values['client-name'] ? { clientName: values['client-name'] } : {}),
    ...(values['environment-name']
      ? { envName: values['environment-name'] }
      : {}),
  });
  const state = (created: boolean) => (created ? 'created' : 'exists');
  console.log(
    `client      ${tenant.clientSlug}  ${tenant.clientId}  (${state(tenant.clientCreated)})`,
  );
  console.log(
    `environment ${tenant.envSlug}  ${tenant.environmentId}  (${state(tenant.environmentCreated)})`,
  );
} catch (error) {
  console.error(
    `tenant failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exitCode = 1;
} finally {
  await db.end();
}
