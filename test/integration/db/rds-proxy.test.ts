/**
 * RDS Proxy's stand-in (test/helpers/rds-proxy.ts) pools as RDS Proxy
 * does: a client is answered by the proxy and lent an open backend of its
 * login, which goes back to the pool when the client leaves, without the
 * session state the client left on it; a backend left mid-transaction is
 * closed, not lent again.
 */
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts';
import { eventually } from '../../helpers/eventually.ts';
import { loginUrl } from '../../helpers/logins.ts';
import { startTlsProxy, type TlsProxy } from '../../helpers/rds-proxy.ts';

describe("RDS Proxy's stand-in", () => {
  let database: TestDatabase;
  let proxy: TlsProxy;
  let ca: Buffer;

  beforeAll(async () => {
    database = await createTestDatabase();
    const url = new URL(database.url);
    proxy = await startTlsProxy({
      host: url.hostname,
      port: Number(url.port || 5432),
    });
    ca = readFileSync(proxy.caFile);
  });
  afterAll(async () => {
    await proxy?.stop();
    await database?.drop();
  });

  /** A client as `fn`'s login through the proxy, TLS verified. */
  async function client(fn: 'api' | 'sync' = 'api'): Promise<pg.Client> {
    const url = new URL(loginUrl(fn, database.url));
    const c = new pg.Client({
      host: proxy.host,
      port: proxy.port,
      user: decodeURIComponent(url.username),
      password: decodeURIComponent(url.password),
      database: url.pathname.slice(1),
      application_name: 'proxy-test',
      ssl: { ca, servername: proxy.host },
    });
    await c.connect();
    return c;
  }

  /** The backend pid of the BackendKeyData the client was answered with. */
  const keyPid = (c: pg.Client) =>
    (c as unknown as { processID: number }).processID;

  async function pidOf(c: pg.Client): Promise<number> {
    const { rows } = await c.query<{ pid: number }>(
      'select pg_backend_pid() as pid',
    );
    return rows[0]!.pid;
  }

  /** Ends `c` and waits for its backend to be back in the pool. */
  async function leave(c: pg.Client, idleAfter: number): Promise<void> {
    await c.end();
    await eventually(
      `${idleAfter} idle backend(s)`,
      () => proxy.idleBackends === idleAfter,
    );
  }

  it('lends the same backend to the login’s next client', async () => {
    proxy.drain();
    const opened = proxy.backendsOpened;
    const first = await client();
    const pid = await pidOf(first);
    expect(keyPid(first)).toBe(pid);
    await leave(first, 1);

    const second = await client();
    expect(await pidOf(second)).toBe(pid);
    // The key data the client got is its backend's, so a cancel reaches it.
    expect(keyPid(second)).toBe(pid);
    expect(proxy.backendsOpened).toBe(opened + 1);
    await leave(second, 1);
  });

  it('opens another backend for another login, and for a second client at once', async () => {
    proxy.drain();
    const [a, b, other] = await Promise.all([
      client(),
      client(),
      client('sync'),
    ]);
    const pids = await Promise.all([a, b, other].map(pidOf));
    expect(new Set(pids).size).toBe(3);
    const { rows } = await other.query<{ who: string }>(
      'select current_user as who',
    );
    expect(rows[0]!.who).toBe(
      decodeURIComponent(new URL(loginUrl('sync', database.url)).username),
    );
    await Promise.all([a.end(), b.end(), other.end()]);
    await eventually('three idle backends', () => proxy.idleBackends === 3);
  });

  it('hands a backend back without the session state its client left', async () => {
    proxy.drain();
    const first = await client();
    const pid = await pidOf(first);
    await first.query("set statement_timeout = '1234ms'");
    await first.query('prepare probe as select 1');
    await first.query('create temp table left_behind (n int)');
    await leave(first, 1);

    const second = await client();
    expect(await pidOf(second)).toBe(pid);
    const { rows } = await second.query<{ statement_timeout: string }>(
      'show statement_timeout',
    );
    expect(rows[0]!.statement_timeout).toBe('0');
    await second.query('prepare probe as select 1');
    await expect(second.query('select * from left_behind')).rejects.toThrow(
      /does not exist/,
    );
    await leave(second, 1);
  });

  it('closes a backend its client left inside a transaction', async () => {
    proxy.drain();
    const first = await client();
    const pid = await pidOf(first);
    await first.query('begin');
    await first.end();
    const second = await client();
    expect(await pidOf(second)).not.toBe(pid);
    await leave(second, 1);
  });

  it('passes the server’s refusal of a login on to the client', async () => {
    const c = new pg.Client({
      host: proxy.host,
      port: proxy.port,
      user: 'no_such_login',
      password: 'x',
      database: new URL(database.url).pathname.slice(1),
      ssl: { ca, servername: proxy.host },
    });
    // The server's own refusal, whichever its authentication method words
    // it: 28000 (the role does not exist) where it trusts the client,
    // 28P01 (password authentication failed) where it asks for a password,
    // as the embedded server and RDS do.
    await expect(c.connect()).rejects.toMatchObject({
      code: expect.stringMatching(/^28(000|P01)$/),
      message: expect.stringContaining('no_such_login'),
    });
  });

  it('opens a new backend for every login after a drain', async () => {
    const before = await client();
    const pid = await pidOf(before);
    proxy.drain();
    await before.end();
    const after = await client();
    expect(await pidOf(after)).not.toBe(pid);
    await after.end();
  });
});
