/**
 * `npm run webhook -- add --client SLUG [--environment SLUG] --kind
 * argocd|alertmanager [--json]`: creates a webhook source and prints its id
 * and, this once, its secret (`--json`: one object `{"id", "secret"}`).
 * `list [--client SLUG]`: ids, kinds, scopes and states, never a secret.
 * `disable --id ID`: the source is refused from then on. Uses DATABASE_URL,
 * else the local stack's database.
 */
import {
  addWebhookSource,
  disableWebhookSource,
  listWebhookSources,
} from '../shared/webhooks/sources.ts';
import { parseSubcommand, withLocalDatabase } from './subcommand.ts';

const USAGE = `usage:
  npm run webhook -- add --client SLUG [--environment SLUG] --kind argocd|alertmanager [--json]
  npm run webhook -- list [--client SLUG]
  npm run webhook -- disable --id ID`;

const { command, values } = parseSubcommand(
  USAGE,
  ['add', 'list', 'disable'],
  {
    client: { type: 'string' },
    environment: { type: 'string' },
    kind: { type: 'string' },
    id: { type: 'string' },
    json: { type: 'boolean' },
  },
  { add: ['client', 'kind'], disable: ['id'] },
);

await withLocalDatabase('webhook', command, async (db) => {
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
});
