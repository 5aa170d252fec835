/**
 * RDS Proxy's stand-in in front of a server that checks passwords with a
 * challenge, as a PostgreSQL with a stock pg_hba.conf does (`scram-sha-256`,
 * or `md5` for a login whose password was stored that way): the stand-in
 * answers the server's SASL or MD5 challenge with the client's password and
 * the client gets its session. The suite's own server asks for passwords in
 * the clear or not at all, so only this file reaches those exchanges.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type EmbeddedPostgresHandle,
  startEmbeddedPostgres,
} from '../../../infra/local/embedded-postgres.ts';
import { freePort } from '../../helpers/global-setup.ts';
import { startTlsProxy, type TlsProxy } from '../../helpers/rds-proxy.ts';

describe("RDS Proxy's stand-in with challenge authentication", () => {
  let folder: string;
  let server: EmbeddedPostgresHandle;
  let proxy: TlsProxy;
  let ca: Buffer;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), 'k8s-inventory-auth-'));
    server = await startEmbeddedPostgres({
      dataDir: join(folder, 'postgres'),
      port: await freePort(),
      ephemeral: true,
      auth: 'md5',
    });
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      await admin.query(
        "set password_encryption = 'scram-sha-256'; create role scram_login login password 'scram secret'",
      );
      await admin.query(
        "set password_encryption = 'md5'; create role md5_login login password 'md5 secret'",
      );
    } finally {
      await admin.end();
    }
    const url = new URL(server.url);
    proxy = await startTlsProxy({
      host: url.hostname,
      port: Number(url.port),
    });
    ca = readFileSync(proxy.caFile);
  }, 120_000);
  afterAll(async () => {
    await proxy?.stop();
    await server?.stop();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  function client(user: string, password: string): pg.Client {
    return new pg.Client({
      host: proxy.host,
      port: proxy.port,
      user,
      password,
      database: 'postgres',
      ssl: { ca, servername: proxy.host },
    });
  }

  async function storedAs(user: string): Promise<string> {
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    try {
      const { rows } = await admin.query<{ method: string }>(
        `select split_part(rolpassword, '$', 1) as method
           from pg_authid where rolname = $1`,
        [user],
      );
      return rows[0]!.method;
    } finally {
      await admin.end();
    }
  }

  it.each([
    ['scram_login', 'scram secret', 'SCRAM-SHA-256'],
    ['md5_login', 'md5 secret', 'md5'],
  ])(
    'opens a session for %s, whose password the server checks by its challenge',
    async (user, password, stored) => {
      // The server's challenge follows how the password is stored.
      expect((await storedAs(user)).slice(0, stored.length)).toBe(stored);
      const c = client(user, password);
      await c.connect();
      try {
        const { rows } = await c.query<{ who: string }>(
          'select current_user as who',
        );
        expect(rows[0]!.who).toBe(user);
      } finally {
        await c.end();
      }
    },
  );

  it.each([
    ['scram_login', 'not it'],
    ['md5_login', 'not it'],
  ])(
    'passes on the server’s refusal of a wrong password for %s',
    async (user, password) => {
      proxy.drain();
      await expect(client(user, password).connect()).rejects.toMatchObject({
        code: '28P01',
      });
    },
  );
});
