/**
 * `npm run webhook -- add --client SLUG [--environment SLUG] --kind
 * argocd|alertmanager [--json]`: creates a webhook source and prints its id
 * and, this once, its secret (`--json`: one object `{"id", "secret"}`).
 * `list [--client SLUG]`: ids, kinds, scopes and states, never a secret.
 * `disable --id ID`: the source is refused from then on. Uses DATABASE_URL,
 * else the local stack's database.
 */
import { parseArgs } from 'node:util';
import { getConfig } from '../shared/config.ts';
import { localDatabaseUrl } from '../shared/db/local-url.ts';
import { createPool } from '../shared/db/pool.ts';
import {
  addWebhookSource,
  disableWebhookSource,
  listWebhookSources,
} from '../shared/webhooks/sources.ts';

const USAGE = `usage:
  npm run webhook -- add --client SLUG [--environment SLUG] --kind argocd|alertmanager [--json]
  npm run webhook -- list [--client SLUG]
  npm run webhook -- disable --id ID`;

const { values, positionals } = parseArgs({
  options: {
    client: { type: 'string' },
    environment: { type: 'string' },
    kind: { type: 'string' },
    id: { type: 'string' },
    json: { type: 'boolean' },
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
if (command === 'add' && (!values.client || !values.kind)) usage();
if (command === 'disable' && !values.id) usage();
if (!['add', 'list', 'disable'].includes(command ?? '')) usage();

const db = createPool({
  connectionString: localDatabaseUrl(getConfig()),
  max: 1,
  applicationName: 'webhook',
});
try {
  if (command === 'add') {
    const source = await addWebhookSource(db, {
      clientSlug: values.client ?? '',
      envSlug: values.environment,
      kind: values.kind ?? '',
    });
    if (values.json) {
      console.log(JSON.stringify({ id: source.id, secret: source.secret }));
    } else {
      console.log(`source  ${source.id}`);
      console.log(`secret  ${source.secret}  (shown once: store it now)`);
    }
  } else if (command === 'list') {
    for (const s of await listWebhookSources(db, values.client)) {
      const scope = s.environment ?? '(client-wide)';
      const state = s.disabledAt
        ? `disabled ${s.disabledAt.toISOString()}`
        : 'enabled';
      console.log(`${s.id}  ${s.kind}  ${s.client}/${scope}  ${state}`);
    }
  } else {
    const done = await disableWebhookSource(db, values.id ?? '');
    console.log(
      `source  ${done.id}  disabled ${done.disabledAt.toISOString()}`,
    );
  }
} catch (error) {
  console.error(
    `webhook ${command} failed: ${error instanceof Error ? error.message : String(error)}`,
  );
  process.exitCode = 1;
} finally {
  await db.end();
}
