/**
 * The database's own least privilege (README.md, "Database
 * logins and the grants the migrate step creates"): one NOLOGIN group role
 * per kind of caller, carrying exactly the privileges that caller's SQL
 * needs, and one login per caller that is granted its group role.
 *
 * `ensureRolesAndGrants` runs as the schema owner after every deploy's
 * migrations, in one transaction: group roles are created when missing,
 * every table privilege of every group role is revoked and granted again
 * (so the set is always exactly the one below, and a table a new migration
 * added gets it too), then each login is created or given its current
 * password and granted its group role. Concurrent sessions see the old
 * privileges or the new ones, never a mix.
 *
 * Names go in through `quoteIdentifier`. A password never goes in as text
 * when it can be avoided: it is sent as a SCRAM-SHA-256 verifier computed
 * here (what the server would store anyway), so not even a failed
 * statement in the server log shows it. Nothing here logs.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { quoteIdentifier, quoteLiteral } from './escape.ts';
import {
  type Db,
  queryMaybeOne,
  queryOne,
  type Tx,
  withTransaction,
} from './pool.ts';

/** The group roles, by the kind of caller whose privileges each carries. */
export const GROUP_ROLES = {
  /** The API: reads everything; counts its callers' rate limits. */
  reader: 'inventory_reader',
  /** The sync: writes the inventory, never tenancy. */
  writer: 'inventory_writer',
  /** The sweeps: mark clusters disconnected, delete expired events. */
  maintenance: 'inventory_maintenance',
  /** The admin function: tenants and grants. */
  tenancy: 'inventory_tenancy',
  /** The bridge: records the messages it refuses, nothing else. */
  ingest: 'inventory_ingest',
  /** The webhook receiver: deploys and alert groups from its sources. */
  webhooks: 'inventory_webhooks',
} as const;

export type GroupKind = keyof typeof GROUP_ROLES;
export type GroupRoleName = (typeof GROUP_ROLES)[GroupKind];

/**
 * The application logins (README.md, the logins table): each group role's
 * login, named after the caller that uses it, never after its group role
 * (a login cannot be its own group: `checkInput` refuses that). The
 * database stack makes one secret per entry; the migrate step creates the
 * login of each.
 */
export const APPLICATION_LOGINS = {
  /** The sync function: writes the inventory. */
  writer: { username: 'inventory_sync', role: GROUP_ROLES.writer },
  /** The sweeps: mark clusters disconnected, expire events. */
  maintenance: { username: 'inventory_sweeps', role: GROUP_ROLES.maintenance },
  /** The API functions: read-only (plus the API's rate-limit counters). */
  reader: { username: 'inventory_api', role: GROUP_ROLES.reader },
  /** The admin function: tenants and grants. */
  tenancy: { username: 'inventory_admin', role: GROUP_ROLES.tenancy },
  /** The bridge: records the messages it refuses in ingest_rejections. */
  ingest: { username: 'inventory_bridge', role: GROUP_ROLES.ingest },
  /** The webhook receiver: stores deploys and alert groups. */
  webhooks: { username: 'inventory_receiver', role: GROUP_ROLES.webhooks },
} as const satisfies Record<
  GroupKind,
  { username: string; role: GroupRoleName }
>;

/**
 * Which group role's login each function connects with, in AWS (the stacks
 * bind each function's secret by this), in the local stack and in tests.
 * The migrate function alone connects as the schema owner.
 */
export const FUNCTION_LOGINS = {
  /** The sync function (the queue's consumer). */
  sync: 'writer',
  /** The bridge's refusal recorder. */
  bridge: 'ingest',
  /** Every API route but the webhook receiver, live reads included. */
  api: 'reader',
  /** The webhook route (shared/http/routes.ts: `dbLogin: 'webhooks'`). */
  receiver: 'webhooks',
  /** Both sweeps. */
  sweeps: 'maintenance',
  /** The admin function (npm run tenant / grant in AWS). */
  admin: 'tenancy',
} as const satisfies Record<string, GroupKind>;

export type FunctionKind = keyof typeof FUNCTION_LOGINS;

const GROUP_ROLE_NAMES: readonly string[] = Object.values(GROUP_ROLES);

/**
 * Tables the writer may read but never change: tenancy, the platform's
 * hosts (the sync only links nodes to them) and the migration ledger.
 */
export const WRITER_READ_ONLY_TABLES = [
  'clients',
  'environments',
  'user_grants',
  'hosts',
  'schema_migrations',
] as const;

/** One application login, as its secret holds it. */
export interface LoginCredentials {
  /** One of GROUP_ROLES (without the test prefix). */
  groupRole: string;
  username: string;
  password: string;
}

export interface RolesOptions {
  /**
   * Prepended to every group role name. Roles are cluster-wide, so tests
   * give each run its own; a deployment uses none.
   */
  rolePrefix?: string;
  /** Bound on the whole transaction. */
  timeoutMs?: number;
}

export interface RolesResult {
  /** The group roles as created (prefix included). */
  groupRoles: string[];
  logins: { username: string; groupRole: string; created: boolean }[];
}

export class RolesError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'RolesError';
  }
}

export function isGroupRole(name: string): name is GroupRoleName {
  return GROUP_ROLE_NAMES.includes(name);
}

/** Throws naming every name that is not a known group role. */
export function assertGroupRoles(names: Iterable<string>): void {
  const unknown = [...names].filter((name) => !isGroupRole(name));
  if (unknown.length > 0) {
    throw new RolesError(
      `unknown group role ${unknown.map((n) => JSON.stringify(n)).join(', ')}: each must be one of ${GROUP_ROLE_NAMES.join(', ')}`,
    );
  }
}

const HISTORY_ENSURE = 'k8s_event_history_ensure_partitions(date, date)';
const HISTORY_DROP = 'k8s_event_history_drop_partitions(date)';

const ROLE_NAME = /^[a-z_][a-z0-9_]*$/;
const MAX_NAME = 63;
// Serializes two runs (a deploy retried while the first still runs); the
// migration runner uses 727_001.
const LOCK_KEY = 727_002;

/** The quoted group role names, prefix applied. */
function groupNames(prefix: string): Record<GroupKind, string> {
  const names = {} as Record<GroupKind, string>;
  for (const [kind, name] of Object.entries(GROUP_ROLES)) {
    names[kind as GroupKind] = quoteIdentifier(`${prefix}${name}`);
  }
  return names;
}

/**
 * The privilege statements, in order. Everything is revoked first, so the
 * grants below are the whole truth.
 */
export function privilegeStatements(database: string, prefix = ''): string[] {
  const g = groupNames(prefix);
  const all = Object.values(g).join(', ');
  const db = quoteIdentifier(database);
  const readOnly = WRITER_READ_ONLY_TABLES.join(', ');
  return [
    'revoke create on schema public from public',
    `revoke all on database ${db} from public`,
    `grant connect on database ${db} to ${all}`,
    `grant usage on schema public to ${all}`,
    `revoke all on all tables in schema public from ${all}`,
    `revoke all on all sequences in schema public from ${all}`,

    // reader (API): read-only, but for the rate-limit counters it keeps.
    `grant select on all tables in schema public to ${g.reader}`,
    `grant insert, update on api_rate_limits to ${g.reader}`,
    // ...and the live-read audit: a row before each read, its outcome
    // after (live/audit.ts); never a delete, never another column.
    `grant insert on live_read_audit to ${g.reader}`,
    `grant update (outcome, status, duration_ms, bytes) on live_read_audit to ${g.reader}`,

    // writer (sync): the inventory, change_events, ingest_rejections and
    // the cluster's asset row; reads everything.
    `grant select, insert, update, delete on all tables in schema public to ${g.writer}`,
    `revoke insert, update, delete on ${readOnly} from ${g.writer}`,
    `grant usage, select on all sequences in schema public to ${g.writer}`,

    // maintenance (sweeps): both lock cluster rows FOR NO KEY UPDATE, which
    // needs UPDATE on a column of clusters; the stale sweep sets
    // agent_status and updated_at; the retention sweep deletes events.
    `grant select on clusters, k8s_events to ${g.maintenance}`,
    `grant update (agent_status, updated_at) on clusters to ${g.maintenance}`,
    `grant delete on k8s_events to ${g.maintenance}`,
    `grant select, delete on api_rate_limits to ${g.maintenance}`,

    // The event history's partitions are made and dropped by two SECURITY
    // DEFINER functions (migrations/0014): the sync makes the days it
    // needs, the retention sweep makes and drops; nobody else may.
    `revoke all on function ${HISTORY_ENSURE}, ${HISTORY_DROP} from public, ${all}`,
    `grant execute on function ${HISTORY_ENSURE} to ${g.writer}, ${g.maintenance}`,
    `grant execute on function ${HISTORY_DROP} to ${g.maintenance}`,

    // Change retention: change rows and alert groups past retention, walked
    // client by client.
    `grant select on clients to ${g.maintenance}`,
    `grant select, delete on change_events, alert_groups to ${g.maintenance}`,
    // Audit retention (live/audit.ts expireAudit): rows past
    // AUDIT_RETENTION_DAYS, found by their time alone; who read what is
    // none of the sweep's business.
    `grant select (at) on live_read_audit to ${g.maintenance}`,
    `grant delete on live_read_audit to ${g.maintenance}`,

    // tenancy (admin): ensureTenant and grantRole insert (ON CONFLICT DO
    // NOTHING) and read back ids; nothing is updated or deleted.
    `grant select, insert on clients, environments, user_grants to ${g.tenancy}`,
    // The admin's webhook commands: add and list sources, and disable one
    // (its disabled_at, nothing else).
    `grant select, insert on webhook_sources to ${g.tenancy}`,
    `grant update (disabled_at) on webhook_sources to ${g.tenancy}`,
    // The admin's host commands (shared/hosts/repo.ts): add, list with
    // each host's count of linked nodes (their host_id only), and remove
    // (the nodes' link is cleared by the FK, as the table owner).
    `grant select, insert, delete on hosts to ${g.tenancy}`,
    `grant select (host_id) on k8s_nodes to ${g.tenancy}`,

    // ingest (bridge): the refused messages, write-only.
    `grant insert on ingest_rejections to ${g.ingest}`,

    // webhooks (receiver): finds its source and the client's hosts, stores
    // deploys (a replay reads the stored row back) and alert groups.
    `grant select on webhook_sources, hosts, change_events, alert_groups to ${g.webhooks}`,
    `grant insert on change_events to ${g.webhooks}`,
    `grant insert, update on alert_groups to ${g.webhooks}`,
  ];
}

/**
 * Creates the group roles, applies the grants, and creates or updates each
 * login with its password and group role. Idempotent; run as the owner.
 */
export async function ensureRolesAndGrants(
  db: Db,
  logins: readonly LoginCredentials[],
  options: RolesOptions = {},
): Promise<RolesResult> {
  const prefix = options.rolePrefix ?? '';
  checkInput(logins, prefix);
  return withTransaction(
    db,
    async (tx) => {
      await run(tx, 'lock', 'select pg_advisory_xact_lock($1)', [LOCK_KEY]);
      const { database, owner } = await queryOne<{
        database: string;
        owner: string;
      }>(tx, 'select current_database() as database, current_user as owner');

      const groupRoles: string[] = [];
      for (const name of GROUP_ROLE_NAMES) {
        const role = `${prefix}${name}`;
        const existing = await roleInfo(tx, role);
        const quoted = quoteIdentifier(role);
        if (existing === undefined) {
          await run(tx, `group role ${role}`, `create role ${quoted} nologin`);
        } else if (existing.canLogin) {
          await run(tx, `group role ${role}`, `alter role ${quoted} nologin`);
        }
        groupRoles.push(role);
      }

      for (const statement of privilegeStatements(database, prefix)) {
        await run(tx, 'grants', statement);
      }

      const created: RolesResult['logins'] = [];
      for (const login of logins) {
        const group = `${prefix}${login.groupRole}`;
        if (login.username === owner) {
          throw new RolesError(
            `login ${login.username} is the owner running the grants; a ${login.groupRole} login needs its own username`,
          );
        }
        const existing = await roleInfo(tx, login.username);
        if (existing?.superuser) {
          throw new RolesError(
            `login ${login.username} is a superuser; refusing to manage it as a ${login.groupRole} login`,
          );
        }
        const name = quoteIdentifier(login.username);
        const password = passwordClause(login.password);
        const label = `login ${login.username}`;
        await run(
          tx,
          label,
          existing === undefined
            ? `create role ${name} with login inherit password ${password}`
            : `alter role ${name} with login inherit password ${password}`,
        );
        await run(tx, label, `grant ${quoteIdentifier(group)} to ${name}`);
        created.push({
          username: login.username,
          groupRole: group,
          created: existing === undefined,
        });
      }
      return { groupRoles, logins: created };
    },
    { timeoutMs: options.timeoutMs ?? 60_000 },
  );
}

function checkInput(logins: readonly LoginCredentials[], prefix: string): void {
  if (prefix !== '' && !ROLE_NAME.test(prefix)) {
    throw new RolesError(
      `role prefix ${JSON.stringify(prefix)} must be lowercase letters, digits and _`,
    );
  }
  const longest = Math.max(...GROUP_ROLE_NAMES.map((n) => n.length));
  if (prefix.length + longest > MAX_NAME) {
    throw new RolesError(`role prefix ${JSON.stringify(prefix)} is too long`);
  }
  assertGroupRoles(logins.map((l) => l.groupRole));
  const seen = new Set<string>();
  for (const login of logins) {
    if (login.username === '' || login.username.length > MAX_NAME) {
      throw new RolesError(
        `the ${login.groupRole} login's username must be 1-${MAX_NAME} characters`,
      );
    }
    // Under a prefix the group role is the prefixed name: a login of that
    // name would turn the group itself into a login.
    const unprefixed = login.username.startsWith(prefix)
      ? login.username.slice(prefix.length)
      : login.username;
    if (
      isGroupRole(login.username) ||
      isGroupRole(unprefixed) ||
      login.username.startsWith('pg_')
    ) {
      throw new RolesError(
        `the ${login.groupRole} login cannot be named ${login.username}`,
      );
    }
    if (login.password === '') {
      throw new RolesError(`login ${login.username} has an empty password`);
    }
    if (seen.has(login.username)) {
      throw new RolesError(
        `login ${login.username} is given for more than one group role`,
      );
    }
    seen.add(login.username);
  }
}

async function roleInfo(
  tx: Tx,
  name: string,
): Promise<{ canLogin: boolean; superuser: boolean } | undefined> {
  const row = await queryMaybeOne<{ rolcanlogin: boolean; rolsuper: boolean }>(
    tx,
    'select rolcanlogin, rolsuper from pg_roles where rolname = $1',
    [name],
  );
  return row && { canLogin: row.rolcanlogin, superuser: row.rolsuper };
}

/**
 * Runs one statement; a failure names the step, never the statement (a
 * login's statement carries its password verifier).
 */
async function run(
  tx: Tx,
  step: string,
  sql: string,
  values?: readonly unknown[],
): Promise<void> {
  try {
    // The driver's own message, untranslated: the step's failure is for
    // whoever deploys, and names what PostgreSQL said.
    await tx.query(sql, values as unknown[] | undefined);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new RolesError(`${step} failed: ${reason}`, { cause: error });
  }
}

/** Printable ASCII: SASLprep leaves it as it is. */
const PLAIN_ASCII = /^[\x20-\x7e]+$/;

/**
 * The PASSWORD clause's literal: a SCRAM-SHA-256 verifier when the password
 * is printable ASCII (as generated secrets are), else the password itself
 * for the server to normalize and hash.
 */
function passwordClause(password: string): string {
  return quoteLiteral(
    PLAIN_ASCII.test(password) ? scramSha256Verifier(password) : password,
  );
}

export interface VerifierOptions {
  salt?: Buffer;
  iterations?: number;
}

/**
 * The verifier PostgreSQL stores for `password` (RFC 5802/7677):
 * `SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>`, base64.
 * The password must already be in SASLprep form (printable ASCII is).
 */
export function scramSha256Verifier(
  password: string,
  options: VerifierOptions = {},
): string {
  const salt = options.salt ?? randomBytes(16);
  const iterations = options.iterations ?? 4096;
  const salted = pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  const b64 = (b: Buffer) => b.toString('base64');
  return `SCRAM-SHA-256$${iterations}:${b64(salt)}$${b64(storedKey)}:${b64(serverKey)}`;
}
