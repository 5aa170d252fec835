/**
 * The admin function's commands, the same code as `npm run tenant` and
 * `npm run grant`, for `aws lambda invoke` inside the VPC:
 *
 *   {"command":"tenant","client":"acme","environment":"production"}
 *   {"command":"grant","email":"alice@example.com","role":"viewer","client":"acme","environment":"production"}
 *
 * (`environment` is optional for a grant: without it the grant covers the
 * whole client.) Webhook sources, as `npm run webhook` manages them:
 *
 *   {"command":"webhook-add","client":"acme","environment":"production","kind":"argocd"}
 *   {"command":"webhook-list","client":"acme"}
 *   {"command":"webhook-disable","id":"<source id>"}
 *
 * (`webhook-add` returns the secret, this once; `webhook-list` never does.)
 * CMDB hosts, as `npm run host` manages them (nodes link to a new host on
 * their cluster's next sync):
 *
 *   {"command":"host-add","client":"acme","environment":"production","hostname":"node-1","ip":"10.0.0.5","os":"Ubuntu 22.04"}
 *   {"command":"host-list","client":"acme"}
 *   {"command":"host-remove","id":"<host id>"}
 *
 * An unknown key is refused rather than ignored, so a
 * misspelt `environment` cannot widen a grant to the whole client.
 */
import * as z from 'zod';
import { ROLES } from '../auth/roles.ts';
import type { Db } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import {
  addHost,
  type HostListing,
  listAllHosts,
  removeHost,
} from '../hosts/repo.ts';
import {
  addWebhookSource,
  disableWebhookSource,
  listWebhookSources,
  type NewWebhookSource,
  WEBHOOK_KINDS,
  type WebhookSourceListing,
} from '../webhooks/sources.ts';
import { type GrantResult, grantRole } from './grants.ts';
import { ensureTenant, type Tenant } from './tenants.ts';

const text = () =>
  z.string({
    error: (issue) =>
      issue.input === undefined ? 'required' : 'must be a string',
  });
const nonEmpty = () => text().min(1, 'must not be empty');
const slug = nonEmpty();

const tenantCommand = z.strictObject({
  command: z.literal('tenant'),
  client: slug,
  environment: slug,
  /** Display names; the slugs when not given. */
  clientName: text().min(1).optional(),
  environmentName: text().min(1).optional(),
});

const grantCommand = z.strictObject({
  command: z.literal('grant'),
  email: text().min(3, 'must be an email address'),
  role: z.enum(ROLES, { error: `must be one of ${ROLES.join(', ')}` }),
  client: slug,
  environment: slug.optional(),
});

const webhookAddCommand = z.strictObject({
  command: z.literal('webhook-add'),
  client: slug,
  environment: slug.optional(),
  kind: z.enum(WEBHOOK_KINDS, {
    error: `must be one of ${WEBHOOK_KINDS.join(', ')}`,
  }),
});

const webhookListCommand = z.strictObject({
  command: z.literal('webhook-list'),
  client: slug.optional(),
});

const webhookDisableCommand = z.strictObject({
  command: z.literal('webhook-disable'),
  id: nonEmpty(),
});

const hostAddCommand = z.strictObject({
  command: z.literal('host-add'),
  client: slug,
  environment: slug,
  hostname: nonEmpty(),
  ip: nonEmpty().optional(),
  os: nonEmpty().optional(),
});

const hostListCommand = z.strictObject({
  command: z.literal('host-list'),
  client: slug.optional(),
});

const hostRemoveCommand = z.strictObject({
  command: z.literal('host-remove'),
  id: nonEmpty(),
});

export const adminCommandSchema = z.discriminatedUnion(
  'command',
  [
    tenantCommand,
    grantCommand,
    webhookAddCommand,
    webhookListCommand,
    webhookDisableCommand,
    hostAddCommand,
    hostListCommand,
    hostRemoveCommand,
  ],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? 'must be "tenant" or "grant", a webhook command ("webhook-add", "webhook-list", "webhook-disable") or a host command ("host-add", "host-list", "host-remove")'
        : 'the event must be a JSON object with a "command"',
  },
);

export type AdminCommand = z.infer<typeof adminCommandSchema>;

export type AdminResult =
  | ({ command: 'tenant' } & Tenant)
  | ({ command: 'grant' } & GrantResult)
  | ({ command: 'webhook-add' } & NewWebhookSource)
  | { command: 'webhook-list'; sources: WebhookSourceListing[] }
  | { command: 'webhook-disable'; id: string; disabledAt: Date }
  | { command: 'host-add'; id: string }
  | { command: 'host-list'; hosts: HostListing[] }
  | { command: 'host-remove'; id: string };

/** The invocation's event as a command; a ValidationError listing every problem. */
export function parseAdminCommand(event: unknown): AdminCommand {
  const parsed = adminCommandSchema.safeParse(event);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) =>
      issue.path.length > 0
        ? `${issue.path.join('.')}: ${issue.message}`
        : issue.message,
    );
    throw new ValidationError(`invalid admin command: ${problems.join('; ')}`);
  }
  return parsed.data;
}

/** Runs one command; idempotent, returns the ids it made or found. */
export async function runAdminCommand(
  db: Db,
  event: unknown,
): Promise<AdminResult> {
  const command = parseAdminCommand(event);
  if (command.command === 'tenant') {
    const tenant = await ensureTenant(db, {
      clientSlug: command.client,
      envSlug: command.environment,
      ...(command.clientName ? { clientName: command.clientName } : {}),
      ...(command.environmentName ? { envName: command.environmentName } : {}),
    });
    return { command: 'tenant', ...tenant };
  }
  if (command.command === 'webhook-add') {
    const source = await addWebhookSource(db, {
      clientSlug: command.client,
      envSlug: command.environment,
      kind: command.kind,
    });
    return { command: 'webhook-add', ...source };
  }
  if (command.command === 'webhook-list') {
    const sources = await listWebhookSources(db, command.client);
    return { command: 'webhook-list', sources };
  }
  if (command.command === 'webhook-disable') {
    const disabled = await disableWebhookSource(db, command.id);
    return { command: 'webhook-disable', ...disabled };
  }
  if (command.command === 'host-add') {
    const host = await addHost(db, {
      clientSlug: command.client,
      envSlug: command.environment,
      hostname: command.hostname,
      ip: command.ip,
      os: command.os,
    });
    return { command: 'host-add', ...host };
  }
  if (command.command === 'host-list') {
    return {
      command: 'host-list',
      hosts: await listAllHosts(db, command.client),
    };
  }
  if (command.command === 'host-remove') {
    return { command: 'host-remove', ...(await removeHost(db, command.id)) };
  }
  const grant = await grantRole(db, {
    email: command.email,
    role: command.role,
    clientSlug: command.client,
    envSlug: command.environment,
  });
  return { command: 'grant', ...grant };
}
