/**
 * `npm run host -- add --client SLUG --environment SLUG --hostname NAME
 * [--ip IP] [--os TEXT]`: adds a CMDB host; the nodes of that environment
 * whose name (or an address) matches link to it on their cluster's next
 * sync. `list [--client SLUG]`: every host with its linked node count.
 * `remove --id ID`: deletes the host; its nodes are unlinked at once. Uses
 * DATABASE_URL, else the local stack's database.
 */
import { addHost, listAllHosts, removeHost } from '../shared/hosts/repo.ts';
import { parseSubcommand, withLocalDatabase } from './subcommand.ts';

const USAGE = `usage:
  npm run host -- add --client SLUG --environment SLUG --hostname NAME [--ip IP] [--os TEXT]
  npm run host -- list [--client SLUG]
  npm run host -- remove --id ID`;

const { command, values } = parseSubcommand(
  USAGE,
  ['add', 'list', 'remove'],
  {
    client: { type: 'string' },
    environment: { type: 'string' },
    hostname: { type: 'string' },
    ip: { type: 'string' },
    os: { type: 'string' },
    id: { type: 'string' },
  },
  { add: ['client', 'environment', 'hostname'], remove: ['id'] },
);

await withLocalDatabase('host', command, async (db) => {
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
});
