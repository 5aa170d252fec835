/**
 * `npm run host -- add --client SLUG --environment SLUG --hostname NAME
 * [--ip IP] [--os TEXT]`: adds a CMDB host; the nodes of that environment
 * whose name (or an address) matches link to it on their cluster's next
 * sync. `list [--client SLUG]`: every host with its linked node count.
 * `remove --id ID`: deletes the host; its nodes are unlinked at once. Uses
 * DATABASE_URL, else the local stack's database.
 */
import { parseArgs } from 'node:util';
import { getConfig } from '../shared/config.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool } from '../shared/db/pool.ts';
import { addHost, listAllHosts, removeHost } from '../shared/hosts/repo.ts';

const USAGE = `usage:
  npm run host -- add --client SLUG --environment SLUG --hostname NAME [--ip IP] [--os TEXT]
  npm run host -- list [--client SLUG]
  npm run host -- remove --id ID`;

const { values, positionals } = parseArgs({
  options: {
    client: { type: 'string' },
    environment: { type: 'string' },
    hostname: { type: 'string' },
    ip: { type: 'string' },
    os: { type: 'string' },
    id: { type: 'string' },
  },
  allowPositionals: true,
  strict: true,
});
const [command] = positionals;

function usage(): never {
  console.error(USAGE);
  process.exit(2);
}

if (positionals.length !== 1) usage();
if (!['add', 'list', 'remove'].includes(command ?? '')) usage();
if (
  command === 'add' &&
  (!values.client || !values.environment || !values.hostname)
) {
  usage();
}
if (command === 'remove' && !values.id) usage();

const db = createPool({
  connectionString: localDatabaseUrl(getConfig()),
  max: 1,
  applicationName: 'host',
});
try {
  if (command === 'add') {
    const host = await addHost(db, {
      clientSlug: values.client ?? '',
      envSlug: values.environment ?? '',
      hostname: values.hostname ?? '',
      ip: values.ip,
      os: values.os,
    });
    console.log(`host  ${host.id}  (nodes link on their cluster's next sync)`);
  } else if (command === 'list') {
    for (const h of await listAllHosts(db, values.client)) {
      console.log(
        [
          h.id,
          `${h.client}/${h.environment ?? '(no environment)'}`,
          h.hostname,
          h.ipAddress ?? '-',
          h.os ?? '-',
          `${h.linkedNodes} node(s)`,
        ].join('  '),
      );
    }
  } else {
    const done = await removeHost(db, values.id ?? '');
    console.log(`host  ${done.id}  removed`);
  }
} catch (error) {
  console.error(
    `host ${command} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exitCode = 1;
} finally {
  await db.end();
}
