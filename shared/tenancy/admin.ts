/**
 * The admin function's commands, the same code as `npm run tenant` and
 * `npm run grant`, for `aws lambda invoke` inside the VPC:
 *
 *   {"command":"tenant","client":"acme","environment":"production"}
 *   {"command":"grant","email":"alice@example.com","role":"viewer","client":"acme","environment":"production"}
 *
 * (`environment` is optional for a grant: without it the grant covers the
 * whole client.) An unknown key is refused rather than ignored, so a
 * misspelt `environment` cannot widen a grant to the whole client.
 */
import { z } from 'zod';
import { ROLES } from '../auth/roles.ts';
import type { Db } from '../db/pool.ts';
import { ValidationError } from '../errors.ts';
import { type GrantResult, grantRole } from './grants.ts';
import { ensureTenant, type Tenant } from './tenants.ts';

const text = () =>
  z.string({
    error: (issue) =>
      issue.input === undefined ? 'required' : 'must be a string',
  });
const slug = text().min(1, 'must not be empty');

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

export const adminCommandSchema = z.discriminatedUnion(
  'command',
  [tenantCommand, grantCommand],
  {
    error: (issue) =>
      issue.code === 'invalid_union'
        ? 'must be "tenant" or "grant"'
        : 'the event must be a JSON object with a "command"',
  },
);

export type AdminCommand = z.infer<typeof adminCommandSchema>;

export type AdminResult =
  | ({ command: 'tenant' } & Tenant)
  | ({ command: 'grant' } & GrantResult);

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
  const grant = await grantRole(db, {
    email: command.email,
    role: command.role,
    clientSlug: command.client,
    envSlug: command.environment,
  });
  return { command: 'grant', ...grant };
}
