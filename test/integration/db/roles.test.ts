import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  DatabaseUnreachableError,
  deployDatabase,
  waitForDatabase,
} from '../../../shared/db/deploy.ts';
import { createPool, type Db, queryOne } from '../../../shared/db/pool.ts';
import {
  ensureRolesAndGrants,
  GROUP_ROLES,
  type GroupKind,
  type LoginCredentials,
  RolesError,
  scramSha256Verifier,
} from '../../../shared/db/roles.ts';
import { recordRejection } from '../../../shared/ingest/rejections.ts';
import { finishAudit, insertAudit } from '../../../shared/live/audit.ts';
import { expireEvents } from '../../../shared/sweeps/event-retention.ts';
import { markStaleClusters } from '../../../shared/sweeps/stale-clusters.ts';
import { grantRole } from '../../../shared/tenancy/grants.ts';
import { ensureTenant } from '../../../shared/tenancy/tenants.ts';
import { receiveWebhook } from '../../../shared/webhooks/receive.ts';
import { addWebhookSource } from '../../../shared/webhooks/sources.ts';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { createTenant, type Tenant } from '../../helpers/inventory-db.ts';
import { captureStdout, syncedCluster } from '../sweeps/support.ts';

const DAY = 86_400_000;
const webhookFixture = (name: string) =>
  readFileSync(
    new URL(`../../fixtures/webhooks/${name}`, import.meta.url),
    'utf8',
  );
const KINDS = Object.keys(GROUP_ROLES) as GroupKind[];

// Roles are cluster-wide: every run gets its own names, dropped at the end.
const prefix = `t${randomBytes(4).toString('hex')}_`;
const password = () => `pw-${randomBytes(12).toString('hex')}`;
const loginOf = (kind: GroupKind): LoginCredentials => ({
  groupRole: GROUP_ROLES[kind],
  username: `${prefix}${kind}_login`,
  password: password(),
});
const probeRole = `${prefix}scram_probe`;

/** A connection as `login` to the test database. */
function connectAs(url: string, login: LoginCredentials): Db {
  const target = new URL(url);
  target.username = login.username;
  target.password = login.password;
  return createPool({ connectionString: target.toString(), max: 2 });
}

/** Expects PostgreSQL to refuse the statement for lack of privilege. */
async function expectRefused(
  db: Db,
  sql: string,
  values: unknown[] = [],
): Promise<void> {
  await expect(db.query(sql, values)).rejects.toMatchObject({
    code: '42501',
  });
}

async function dropTestRoles(): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    const { rows } = await admin.query<{ rolname: string }>(
      'select rolname from pg_roles where starts_with(rolname, $1)',
      [prefix],
    );
    // Logins first: a group role's members go with it anyway.
    const names = rows
      .map((r) => r.rolname)
      .sort(
        (a, b) => Number(b.endsWith('_login')) - Number(a.endsWith('_login')),
      );
    for (const name of names) {
      await admin.query(`drop role if exists ${pg.escapeIdentifier(name)}`);
    }
  } finally {
    await admin.end();
  }
}

describe('database roles and grants', () => {
  let database: TestDatabase;
  let tenant: Tenant;
  const logins = Object.fromEntries(
    KINDS.map((kind) => [kind, loginOf(kind)]),
  ) as Record<GroupKind, LoginCredentials>;
  const as = {} as Record<GroupKind, Db>;

  beforeAll(async () => {
    database = await createTestDatabase();
    tenant = await createTenant(database.db);
    await ensureRolesAndGrants(database.db, Object.values(logins), {
      rolePrefix: prefix,
    });
    for (const kind of KINDS) as[kind] = connectAs(database.url, logins[kind]);
  });
  afterAll(async () => {
    await Promise.all(Object.values(as).map((db) => db.end()));
    // The database first: its grants reference the roles.
    await database?.drop();
    await dropTestRoles();
  });

  describe('roles', () => {
    it('creates the group roles without login and each login as a member of its group', async () => {
      // Act
      const { rows } = await database.db.query<{
        rolname: string;
        rolcanlogin: boolean;
        groups: string[];
      }>(
        `select r.rolname, r.rolcanlogin,
                array(select g.rolname from pg_auth_members m
                        join pg_roles g on g.oid = m.roleid
                       where m.member = r.oid order by 1)::text[] as groups
           from pg_roles r where starts_with(r.rolname, $1) order by 1`,
        [prefix],
      );

      // Assess
      const byName = new Map(rows.map((r) => [r.rolname, r]));
      for (const kind of KINDS) {
        const group = byName.get(`${prefix}${GROUP_ROLES[kind]}`);
        expect(group, kind).toMatchObject({ rolcanlogin: false, groups: [] });
        expect(byName.get(logins[kind].username), kind).toMatchObject({
          rolcanlogin: true,
          groups: [`${prefix}${GROUP_ROLES[kind]}`],
        });
      }
    });

    it('is idempotent, and gives an existing login its new password', async () => {
      // Prepare
      const stored = async (name: string) =>
        (
          await queryOne<{ rolpassword: string }>(
            database.db,
            'select rolpassword from pg_authid where rolname = $1',
            [name],
          )
        ).rolpassword;
      const before = await stored(logins.reader.username);
      const rotated = { ...logins.reader, password: password() };
      const out = captureStdout();

      // Act
      let result: Awaited<ReturnType<typeof ensureRolesAndGrants>>;
      try {
        result = await ensureRolesAndGrants(
          database.db,
          [
            ...Object.values(logins).filter((l) => l !== logins.reader),
            rotated,
          ],
          { rolePrefix: prefix },
        );
      } finally {
        out.restore();
      }

      // Assess
      expect(result.logins.every((l) => !l.created)).toBe(true);
      expect(JSON.stringify(result)).not.toContain(rotated.password);
      expect(before).toMatch(/^SCRAM-SHA-256\$4096:/);
      expect(await stored(logins.reader.username)).not.toBe(before);
      // Nothing was written anywhere, the password least of all.
      expect(out.json()).toEqual([]);
      // The login works with its new password, with its group's privileges.
      const rotatedDb = connectAs(database.url, rotated);
      try {
        await expect(
          rotatedDb.query('select count(*) from clusters'),
        ).resolves.toBeDefined();
      } finally {
        await rotatedDb.end();
      }
      // Rotate back, so the later tests' connections (made with the
      // original password, on servers that check passwords) keep working.
      await as.reader.end();
      await ensureRolesAndGrants(database.db, Object.values(logins), {
        rolePrefix: prefix,
      });
      as.reader = connectAs(database.url, logins.reader);
    });

    it('stores the verifier PostgreSQL itself makes of the password', async () => {
      // Prepare: the server hashes a password for a throwaway role.
      const client = await database.db.connect();
      const secret = password();
      let stored: string;
      try {
        await client.query("set password_encryption = 'scram-sha-256'");
        await client.query(
          `create role ${pg.escapeIdentifier(probeRole)} password ${pg.escapeLiteral(secret)}`,
        );
        const { rows } = await client.query<{ rolpassword: string }>(
          'select rolpassword from pg_authid where rolname = $1',
          [probeRole],
        );
        stored = rows[0]!.rolpassword;
      } finally {
        client.release();
      }
      const [, iterations, salt] =
        /^SCRAM-SHA-256\$(\d+):([^$]+)\$/.exec(stored) ?? [];

      // Act
      const ours = scramSha256Verifier(secret, {
        iterations: Number(iterations),
        salt: Buffer.from(salt!, 'base64'),
      });

      // Assess
      expect(ours).toBe(stored);
    });

    it('refuses an unknown group role, and the owner as a login, before changing anything', async () => {
      const owner = (
        await queryOne<{ u: string }>(database.db, 'select current_user as u')
      ).u;
      await expect(
        ensureRolesAndGrants(
          database.db,
          [{ groupRole: 'inventory_root', username: 'x', password: 'y' }],
          { rolePrefix: prefix },
        ),
      ).rejects.toThrow(/unknown group role "inventory_root"/);
      await expect(
        ensureRolesAndGrants(
          database.db,
          [{ ...logins.writer, username: owner }],
          { rolePrefix: prefix },
        ),
      ).rejects.toBeInstanceOf(RolesError);
    });
  });

  describe('reader (API)', () => {
    it('reads every table', async () => {
      for (const table of ['clusters', 'k8s_pods', 'user_grants', 'clients']) {
        await expect(
          as.reader.query(`select count(*) from ${table}`),
        ).resolves.toBeDefined();
      }
    });

    it('writes the live-read audit, a row and then its outcome, and never deletes one', async () => {
      // Prepare
      const { clusterId } = await syncedCluster(
        database.db,
        tenant,
        new Date(Date.now() - 60_000),
      );
      const entry = {
        requestId: randomUUID(),
        clientId: tenant.clientId,
        environmentId: tenant.environmentId,
        clusterId,
        clusterName: 'audited',
        agentId: randomUUID(),
        subject: 'user:op',
        email: 'op@example.com',
        actor: 'op@example.com',
        route: 'logs' as const,
        namespace: 'shop',
        pod: 'api-0',
      };

      // Act
      const id = await insertAudit(as.reader, entry);
      await finishAudit(as.reader, id, {
        outcome: 'ok',
        status: 200,
        durationMs: 12,
        bytes: 345,
      });

      // Assess
      const row = await queryOne<{ outcome: string; bytes: number }>(
        database.db,
        'select outcome, bytes from live_read_audit where id = $1',
        [id],
      );
      expect(row).toEqual({ outcome: 'ok', bytes: 345 });
      await expectRefused(as.reader, 'delete from live_read_audit');
      await expectRefused(
        as.reader,
        `update live_read_audit set email = 'someone-else@example.com'`,
      );
    });

    it('writes nothing', async () => {
      await expectRefused(
        as.reader,
        `insert into clients (slug, name) values ('r-x', 'r-x')`,
      );
      await expectRefused(as.reader, 'update clusters set name = name');
      await expectRefused(as.reader, 'delete from k8s_pods');
      await expectRefused(
        as.reader,
        `insert into ingest_rejections (stage, subject, reason) values ('sync', 's', 'r')`,
      );
    });
  });

  describe('writer (sync)', () => {
    it('runs a whole sync and records a rejection', async () => {
      // Act
      const { clusterId } = await syncedCluster(
        as.writer,
        tenant,
        new Date(Date.now() - 60_000),
      );
      await recordRejection(as.writer, {
        stage: 'sync',
        subject: 'proxima.a.b.c.kubernetes',
        reason: 'writer probe',
      });

      // Assess
      const pods = await queryOne<{ n: number }>(
        database.db,
        'select count(*)::int as n from k8s_pods where cluster_id = $1',
        [clusterId],
      );
      expect(pods.n).toBeGreaterThan(0);
    });

    it('cannot change tenancy, grants, hosts or the migration ledger', async () => {
      await expectRefused(
        as.writer,
        `insert into user_grants (email, role, client_id) values ('w@example.com', 'admin', $1)`,
        [tenant.clientId],
      );
      await expectRefused(
        as.writer,
        `insert into clients (slug, name) values ('w-x', 'w-x')`,
      );
      await expectRefused(as.writer, 'update environments set name = name');
      await expectRefused(as.writer, 'delete from hosts');
      await expectRefused(as.writer, 'delete from schema_migrations');
      await expectRefused(as.writer, 'truncate k8s_events');
    });
  });

  describe('maintenance (sweeps)', () => {
    it('runs both sweeps: marks a stale cluster disconnected and deletes its expired events', async () => {
      // Prepare: a cluster synced now, swept as if three days later.
      const { clusterId } = await syncedCluster(
        database.db,
        tenant,
        new Date(),
      );
      const later = new Date(Date.now() + 3 * DAY);

      // Act
      const stale = await markStaleClusters(as.maintenance, {
        staleMinutes: 15,
        now: later,
      });
      const expired = await expireEvents(as.maintenance, {
        retentionHours: 24,
        historyDays: 14,
        now: later,
      });

      // Assess
      expect(stale.clusterIds).toContain(clusterId);
      expect(expired.deleted).toBeGreaterThan(0);
      const left = await queryOne<{ n: number }>(
        database.db,
        'select count(*)::int as n from k8s_events where cluster_id = $1',
        [clusterId],
      );
      expect(left.n).toBe(0);
    });

    it('may update agent_status and delete events, nothing else', async () => {
      await expect(
        as.maintenance.query(
          `update clusters set agent_status = agent_status, updated_at = now() where false`,
        ),
      ).resolves.toBeDefined();
      await expect(
        as.maintenance.query('delete from k8s_events where false'),
      ).resolves.toBeDefined();
      await expectRefused(as.maintenance, 'update clusters set name = name');
      await expectRefused(
        as.maintenance,
        `insert into k8s_pods (cluster_id) values ($1)`,
        [randomUUID()],
      );
      await expectRefused(as.maintenance, 'delete from clusters');
      await expectRefused(as.maintenance, 'select count(*) from user_grants');
    });
  });

  describe('tenancy (admin)', () => {
    it('creates tenants and grants, idempotently', async () => {
      // Act
      const slug = `t-${randomUUID().slice(0, 8)}`;
      const first = await ensureTenant(as.tenancy, {
        clientSlug: slug,
        envSlug: 'production',
      });
      const again = await ensureTenant(as.tenancy, {
        clientSlug: slug,
        envSlug: 'production',
      });
      const grant = await grantRole(as.tenancy, {
        email: 'alice@example.com',
        role: 'viewer',
        clientSlug: slug,
        envSlug: 'production',
      });
      const regrant = await grantRole(as.tenancy, {
        email: 'Alice@example.com',
        role: 'viewer',
        clientSlug: slug,
        envSlug: 'production',
      });

      // Assess
      expect(again.clientId).toBe(first.clientId);
      expect(again.clientCreated).toBe(false);
      expect(grant.created).toBe(true);
      expect(regrant).toMatchObject({ created: false, grantId: grant.grantId });
    });

    it('touches nothing but tenants and grants, and deletes nothing', async () => {
      await expectRefused(as.tenancy, 'select count(*) from clusters');
      await expectRefused(as.tenancy, 'delete from user_grants');
      await expectRefused(as.tenancy, 'update clients set name = name');
      await expectRefused(
        as.tenancy,
        `insert into ingest_rejections (stage, subject, reason) values ('sync', 's', 'r')`,
      );
    });
  });

  describe('ingest (bridge)', () => {
    it('records a refused message and nothing else', async () => {
      // Act
      await recordRejection(as.ingest, {
        stage: 'bridge',
        subject: 'not.a.subject',
        reason: 'bridge probe',
      });

      // Assess
      const row = await queryOne<{ stage: string }>(
        database.db,
        `select stage from ingest_rejections where reason = 'bridge probe'`,
      );
      expect(row.stage).toBe('bridge');
      await expectRefused(as.ingest, 'select count(*) from ingest_rejections');
      await expectRefused(as.ingest, 'delete from ingest_rejections');
      await expectRefused(as.ingest, 'select count(*) from clusters');
    });
  });

  describe('webhooks (receiver)', () => {
    it('stores a deploy and an alert group from its source, and nothing else', async () => {
      // Prepare
      const webhook = (id: string, secret: string, body: string) =>
        ({
          pathParameters: { sourceID: id },
          headers: {
            authorization: `Bearer ${secret}`,
            'content-type': 'application/json',
          },
          body,
          isBase64Encoded: false,
        }) as unknown as APIGatewayProxyEventV2;
      const argocd = await addWebhookSource(database.db, {
        clientSlug: tenant.clientSlug,
        kind: 'argocd',
      });
      const alertmanager = await addWebhookSource(database.db, {
        clientSlug: tenant.clientSlug,
        kind: 'alertmanager',
      });

      // Act
      const deploy = await receiveWebhook(
        as.webhooks,
        webhook(
          argocd.id,
          argocd.secret,
          webhookFixture('argocd-sync-succeeded.json'),
        ),
      );
      const alerts = await receiveWebhook(
        as.webhooks,
        webhook(
          alertmanager.id,
          alertmanager.secret,
          JSON.stringify(
            JSON.parse(
              readFileSync(
                new URL(
                  '../../fixtures/alertmanager/alertmanager-v4-completed.json',
                  import.meta.url,
                ),
                'utf8',
              ),
            ).body,
          ),
        ),
      );

      // Assess
      expect(deploy.statusCode).toBe(200);
      expect(alerts.statusCode).toBe(200);
      const stored = await queryOne<{ deploys: number; groups: number }>(
        database.db,
        `select (select count(*)::int from change_events
                 where client_id = $1 and source = 'deployment') as deploys,
                (select count(*)::int from alert_groups
                 where client_id = $1) as groups`,
        [tenant.clientId],
      );
      expect(stored).toEqual({ deploys: 1, groups: 1 });
      await expectRefused(as.webhooks, 'delete from change_events');
      await expectRefused(as.webhooks, 'delete from alert_groups');
      await expectRefused(as.webhooks, 'select count(*) from k8s_pods');
      await expectRefused(as.webhooks, 'select count(*) from user_grants');
      await expectRefused(
        as.webhooks,
        'update webhook_sources set disabled_at = null',
      );
    });
  });

  describe('the deploy step', () => {
    it('migrates and applies the logins, returning no password', async () => {
      // Act
      const result = await deployDatabase({
        url: database.url,
        migrationsDir: 'migrations',
        logins: Object.values(logins),
        rolePrefix: prefix,
      });

      // Assess
      expect(result.applied).toEqual([]);
      expect(result.alreadyApplied).toBeGreaterThan(0);
      expect(result.connectAttempts).toBe(1);
      expect(result.logins.map((l) => l.username).sort()).toEqual(
        Object.values(logins)
          .map((l) => l.username)
          .sort(),
      );
      for (const login of Object.values(logins)) {
        expect(JSON.stringify(result)).not.toContain(login.password);
      }
    });

    it('retries the first connection with backoff, then gives up naming the cause', async () => {
      // Prepare: nothing listens on port 9.
      const db = createPool({
        connectionString: 'postgres://nobody@127.0.0.1:9/none',
        max: 1,
      });
      const retries: number[] = [];

      // Act
      const waited = waitForDatabase(
        db,
        { totalMs: 700, firstDelayMs: 100, maxDelayMs: 200 },
        (info) => retries.push(info.delayMs),
      );

      // Assess
      await expect(waited).rejects.toBeInstanceOf(DatabaseUnreachableError);
      await expect(waited).rejects.toThrow(/ECONNREFUSED/);
      expect(retries.slice(0, 3)).toEqual([100, 200, 200]);
      await db.end();
    });
  });
});
