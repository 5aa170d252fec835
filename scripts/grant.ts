/**
 * Grants a role on a client, or on one environment of it:
 *   npm run grant -- --email alice@example.com --role viewer --client acme [--environment production]
 * Idempotent: granting what is already granted changes nothing. Connects to
 * DATABASE_URL, else the local stack's database (shared/db/local-url.ts).
 * The admin function's `grant` command runs the same shared/tenancy/grants.ts.
 */
import { parseArgs } from 'node:util';
import { isRole, ROLES } from '../shared/auth/roles.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool } from '../shared/db/pool.ts';
import { grantRole } from '../shared/tenancy/grants.ts';

const { values } = parseArgs({
  options: {
    email: { type: 'string' },
    role: { type: 'string' },
    client: { type: 'string' },
    environment: { type: 'string' },
  },
});

const { email, role, client, environment } = values;
if (!email || !role || !client) {
  process.stderr.write(
    'usage: npm run grant -- --email E --role R --client SLUG [--environment SLUG]\n',
  );
  process.exit(2);
}
if (!isRole(role)) {
  process.stderr.write(`unknown role ${role}: one of ${ROLES.join(', ')}\n`);
  process.exit(2);
}

const db = createPool({ connectionString: localDatabaseUrl(), max: 1 });
try {
  const grant = await grantRole(db, {
    email,
    role,
    clientSlug: client,
    envSlug: environment,
  });
  const where = environment ? `${client}/${environment}` : client;
  process.stdout.write(
    grant.created
      ? `granted ${role} on ${where} to ${email}\n`
      : `${email} already has ${role} on ${where}\n`,
  );
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
  process.exitCode = 1;
} finally {
  await db.end();
}
