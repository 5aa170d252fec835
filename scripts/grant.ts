/**
 * Grants a role on a client, or on one environment of it:
 *   npm run grant -- --email alice@example.com --role viewer --client acme [--environment production]
 * Idempotent: granting what is already granted changes nothing. Connects to
 * DATABASE_URL, else the local stack's database (shared/db/local-url.ts).
 */
import { parseArgs } from 'node:util';
import { isRole, ROLES } from '../shared/auth/roles.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool, query, queryMaybeOne } from '../shared/db/pool.ts';

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
  const target = await queryMaybeOne<{
    client_id: string;
    environment_id: string | null;
  }>(
    db,
    `select c.id as client_id, e.id as environment_id
       from clients c
       left join environments e on e.client_id = c.id and e.slug = $2
      where c.slug = $1`,
    [client, environment ?? null],
  );
  if (!target) throw new Error(`no client with slug ${client}`);
  if (environment !== undefined && target.environment_id === null) {
    throw new Error(`client ${client} has no environment ${environment}`);
  }
  const inserted = await query(
    db,
    `insert into user_grants (email, role, client_id, environment_id)
     values ($1, $2, $3, $4)
     on conflict do nothing
     returning id`,
    [email, role, target.client_id, target.environment_id],
  );
  const where = environment ? `${client}/${environment}` : client;
  process.stdout.write(
    inserted.length > 0
      ? `granted ${role} on ${where} to ${email}\n`
      : `${email} already has ${role} on ${where}\n`,
  );
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : error}\n`);
  process.exitCode = 1;
} finally {
  await db.end();
}
