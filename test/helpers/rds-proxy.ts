/**
 * The RDS Proxy stand-in: a TLS endpoint in front of the local PostgreSQL
 * that, like RDS Proxy, authenticates each client itself and lends it an
 * already-open connection ("backend") from a pool per login, returning it
 * when the client disconnects. Only the first client of a login (or one
 * that finds every backend of its login lent) makes the proxy open a new
 * backend, as RDS Proxy does once after a deploy.
 *
 * Per client: the SSLRequest is answered `S` and TLS terminated with a
 * certificate made for the run (so `sslmode=verify-full` and
 * NODE_EXTRA_CA_CERTS are exercised as in AWS; a client that does not ask
 * for TLS is refused, the proxy's `requireTLS`); the startup message is
 * read and the password asked for in the clear (inside TLS); a backend of
 * the same startup parameters and password is taken from the pool, or one
 * is opened with them, the server checking the password (trust, password,
 * md5 or SCRAM-SHA-256); the client is then answered as the server answered
 * that backend (AuthenticationOk, its ParameterStatus values, its
 * BackendKeyData, ReadyForQuery) and the two are joined.
 *
 * A backend goes back to the pool when its client leaves (Terminate or a
 * dropped socket) with nothing in flight and the backend idle outside a
 * transaction; `DISCARD ALL` first, so no session state (settings,
 * prepared statements, advisory locks, temp tables) reaches the next
 * client: the stand-in resets where RDS Proxy would pin. Otherwise the
 * backend is closed.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecureContext, TLSSocket } from 'node:tls';
import { makeCertificate } from './tls-certificate.ts';

export interface TlsProxy {
  host: string;
  port: number;
  /** PEM of the certificate authority the proxy's certificate chains to. */
  caFile: string;
  /** Backends opened so far (each a new PostgreSQL connection). */
  readonly backendsOpened: number;
  /** Backends in the pool, waiting for a client. */
  readonly idleBackends: number;
  /**
   * Closes every backend opened so far, idle now or when its client leaves,
   * so each login's next client opens a new one (a proxy's first clients
   * after a deploy).
   */
  drain(): void;
  stop(): Promise<void>;
}

/** PostgreSQL's SSLRequest: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 0xd2, 0x16, 0x2f]);
const PROTOCOL_3 = 196_608;
const CANCEL_REQUEST = 80_877_102;

interface Sasl {
  startSession(
    mechanisms: string[],
    stream?: unknown,
  ): { mechanism: string; response: string };
  continueSession(
    session: object,
    password: string,
    serverData: string,
  ): Promise<void>;
  finalizeSession(session: object, serverData: string): void;
}
// pg's own SCRAM-SHA-256 client; pg ships no types for it.
const sasl = createRequire(import.meta.url)('pg/lib/crypto/sasl.js') as Sasl;

interface Message {
  type: string;
  body: Buffer;
  /** The whole message as sent (type, length, body). */
  raw: Buffer;
}

/**
 * Splits a stream's bytes into messages: typed (`type`, int32 length,
 * body) or, for a client's first one, untyped (int32 length, body).
 */
class Framer {
  private pending: Buffer = Buffer.alloc(0);
  constructor(private typed: boolean) {}

  push(chunk: Buffer): Message[] {
    this.pending =
      this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out: Message[] = [];
    for (;;) {
      const head = this.typed ? 1 : 0;
      if (this.pending.length < head + 4) break;
      const size = head + this.pending.readInt32BE(head);
      if (this.pending.length < size) break;
      const raw = this.pending.subarray(0, size);
      out.push({
        type: this.typed ? String.fromCharCode(raw[0]!) : '',
        body: raw.subarray(head + 4),
        raw,
      });
      this.pending = this.pending.subarray(size);
      this.typed = true;
    }
    return out;
  }

  /** Bytes read past the last whole message. */
  rest(): Buffer {
    const rest = this.pending;
    this.pending = Buffer.alloc(0);
    return rest;
  }
}

function message(type: string, ...parts: Buffer[]): Buffer {
  const body = Buffer.concat(parts);
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const cstring = (s: string) => Buffer.from(`${s}\0`, 'utf8');

/** Reads messages from `socket` one at a time (the startup exchange). */
class Reader {
  private queue: Message[] = [];
  private waiting: ((m: Message) => void) | undefined;
  private failed: ((e: Error) => void) | undefined;
  private readonly onData = (chunk: Buffer) => {
    this.queue.push(...this.framer.push(chunk));
    this.deliver();
  };
  private readonly onEnd = () =>
    this.failed?.(new Error('the connection closed during the startup'));

  constructor(
    private socket: Socket,
    private framer: Framer,
  ) {
    socket.on('data', this.onData);
    socket.on('close', this.onEnd);
    socket.on('error', this.onEnd);
  }

  private deliver() {
    if (this.waiting && this.queue.length > 0) {
      const resolve = this.waiting;
      this.waiting = undefined;
      this.failed = undefined;
      resolve(this.queue.shift()!);
    }
  }

  next(): Promise<Message> {
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.failed = reject;
      this.deliver();
    });
  }

  /** Stops reading; the bytes read past the last message taken are returned. */
  release(): Buffer {
    this.socket.off('data', this.onData);
    this.socket.off('close', this.onEnd);
    this.socket.off('error', this.onEnd);
    const unread = this.queue.map((m) => m.raw);
    this.queue = [];
    return Buffer.concat([...unread, this.framer.rest()]);
  }
}

interface Backend {
  socket: Socket;
  /** ParameterStatus values, as the server last reported them. */
  parameters: Map<string, string>;
  /** The BackendKeyData message, as the server sent it. */
  keyData: Buffer;
  /** While idle: takes it out of the pool should the server close it. */
  leavePool?: () => void;
  /** The proxy's drain count when it was opened: older ones are not pooled. */
  generation: number;
}

/** The startup parameters of a StartupMessage body (after the version). */
function startupParameters(body: Buffer): [string, string][] {
  const fields = body.subarray(4).toString('utf8').split('\0');
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < fields.length && fields[i] !== ''; i += 2) {
    out.push([fields[i]!, fields[i + 1]!]);
  }
  return out;
}

/** An ErrorResponse's message field. */
function errorText(body: Buffer): string {
  for (const field of body.toString('utf8').split('\0')) {
    if (field.startsWith('M')) return field.slice(1);
  }
  return 'the server refused the connection';
}

/** Opens a backend as the client asked, authenticating with its password. */
async function openBackend(
  upstream: { host: string; port: number },
  startup: Buffer,
  user: string,
  password: string,
): Promise<Backend> {
  const socket = connect(upstream.port, upstream.host);
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => {
    socket.once('connect', resolve);
    socket.once('error', reject);
  });
  const reader = new Reader(socket, new Framer(true));
  socket.write(startup);
  const parameters = new Map<string, string>();
  let keyData = Buffer.alloc(0);
  let session: object | undefined;
  try {
    for (;;) {
      const m = await reader.next();
      if (m.type === 'E') throw new ServerRefusal(m.raw, errorText(m.body));
      if (m.type === 'S') {
        const [name, value] = m.body.toString('utf8').split('\0');
        parameters.set(name!, value!);
      } else if (m.type === 'K') keyData = Buffer.from(m.raw);
      else if (m.type === 'Z') break;
      else if (m.type === 'R') {
        const code = m.body.readInt32BE(0);
        if (code === 3) socket.write(message('p', cstring(password)));
        else if (code === 5) {
          const md5 = (b: Buffer | string) =>
            createHash('md5').update(b).digest('hex');
          const inner = md5(password + user);
          const salted = md5(
            Buffer.concat([Buffer.from(inner), m.body.subarray(4, 8)]),
          );
          socket.write(message('p', cstring(`md5${salted}`)));
        } else if (code === 10) {
          const mechanisms = m.body
            .subarray(4)
            .toString('utf8')
            .split('\0')
            .filter((s) => s !== '');
          const started = sasl.startSession(mechanisms);
          session = started;
          const response = Buffer.from(started.response, 'utf8');
          socket.write(
            message(
              'p',
              cstring(started.mechanism),
              int32(response.length),
              response,
            ),
          );
        } else if (code === 11 && session) {
          await sasl.continueSession(
            session,
            password,
            m.body.subarray(4).toString('utf8'),
          );
          const { response } = session as { response: string };
          socket.write(message('p', Buffer.from(response, 'utf8')));
        } else if (code === 12 && session) {
          sasl.finalizeSession(session, m.body.subarray(4).toString('utf8'));
        } else if (code !== 0) {
          throw new Error(`the stand-in cannot answer authentication ${code}`);
        }
      }
    }
  } catch (error) {
    socket.destroy();
    throw error;
  }
  if (reader.release().length > 0) {
    socket.destroy();
    throw new Error('the server sent more before it was asked');
  }
  return { socket, parameters, keyData, generation: 0 };
}

class ServerRefusal extends Error {
  constructor(
    readonly response: Buffer,
    message: string,
  ) {
    super(message);
  }
}

/** Sends `DISCARD ALL`; true when the backend answered idle. */
function reset(backend: Backend): Promise<boolean> {
  return new Promise((resolve) => {
    const framer = new Framer(true);
    let failed = false;
    const done = (ok: boolean) => {
      backend.socket.off('data', onData);
      backend.socket.off('close', onClose);
      resolve(ok);
    };
    const onClose = () => done(false);
    const onData = (chunk: Buffer) => {
      for (const m of framer.push(chunk)) {
        if (m.type === 'E') failed = true;
        if (m.type === 'S') {
          const [name, value] = m.body.toString('utf8').split('\0');
          backend.parameters.set(name!, value!);
        }
        if (m.type === 'Z') done(!failed && m.body[0] === 0x49 /* I */);
      }
    };
    backend.socket.on('data', onData);
    backend.socket.on('close', onClose);
    backend.socket.write(message('Q', cstring('DISCARD ALL')));
  });
}

/**
 * Starts the stand-in in front of `upstream`: TLS on a free loopback port,
 * each login's backends pooled.
 */
export async function startTlsProxy(upstream: {
  host: string;
  port: number;
}): Promise<TlsProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'k8s-inventory-proxy-'));
  const { keyFile, certFile, caFile } = makeCertificate(dir);
  const context = createSecureContext({
    key: readFileSync(keyFile),
    cert: readFileSync(certFile),
  });
  const sockets = new Set<Socket>();
  const idle = new Map<string, Backend[]>();
  let backendsOpened = 0;
  let generation = 0;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  };

  const takeIdle = (key: string): Backend | undefined => {
    const list = idle.get(key) ?? [];
    for (let b = list.pop(); b; b = list.pop()) {
      if (b.leavePool) b.socket.off('close', b.leavePool);
      b.leavePool = undefined;
      if (!b.socket.destroyed) return b;
    }
    return undefined;
  };

  const putIdle = (key: string, backend: Backend) => {
    if (backend.generation !== generation) {
      // Opened before a drain: closed, not pooled.
      backend.socket.end(message('X'));
      return;
    }
    const list = idle.get(key) ?? [];
    idle.set(key, list);
    list.push(backend);
    backend.leavePool = () => {
      const at = list.indexOf(backend);
      if (at !== -1) list.splice(at, 1);
    };
    backend.socket.on('close', backend.leavePool);
  };

  /** Joins client and backend until the client leaves. */
  const lend = (
    client: TLSSocket,
    backend: Backend,
    key: string,
    early: Buffer,
  ) => {
    const fromClient = new Framer(true);
    const fromBackend = new Framer(true);
    // Queries and Syncs sent whose ReadyForQuery has not come back.
    let inFlight = 0;
    let lastClientType = '';
    let status = 'I';
    let over = false;
    const onClient = (chunk: Buffer) => {
      for (const m of fromClient.push(chunk)) {
        if (m.type === 'X') continue; // the backend outlives its client
        lastClientType = m.type;
        if (m.type === 'Q' || m.type === 'S' || m.type === 'F') inFlight++;
        backend.socket.write(m.raw);
      }
    };
    const onBackend = (chunk: Buffer) => {
      client.write(chunk);
      for (const m of fromBackend.push(chunk)) {
        if (m.type === 'Z') {
          inFlight--;
          status = String.fromCharCode(m.body[0]!);
        } else if (m.type === 'S') {
          const [name, value] = m.body.toString('utf8').split('\0');
          backend.parameters.set(name!, value!);
        }
      }
    };
    const onBackendGone = () => client.destroy();
    const end = () => {
      if (over) return;
      over = true;
      client.off('data', onClient);
      backend.socket.off('data', onBackend);
      backend.socket.off('close', onBackendGone);
      backend.socket.off('error', onBackendGone);
      client.destroy();
      const clean =
        !backend.socket.destroyed &&
        inFlight === 0 &&
        status === 'I' &&
        ['', 'Q', 'S'].includes(lastClientType) &&
        fromClient.rest().length === 0 &&
        fromBackend.rest().length === 0;
      if (!clean) {
        backend.socket.destroy();
        return;
      }
      void reset(backend).then((ok) => {
        if (ok) putIdle(key, backend);
        else backend.socket.end(message('X'));
      });
    };
    client.on('data', onClient);
    client.on('close', end);
    client.on('error', end);
    backend.socket.on('data', onBackend);
    backend.socket.on('close', onBackendGone);
    backend.socket.on('error', onBackendGone);
    if (early.length > 0) onClient(early);
  };

  const serve = async (client: TLSSocket) => {
    const reader = new Reader(client, new Framer(false));
    const startup = await reader.next();
    const code = startup.body.readInt32BE(0);
    if (code === CANCEL_REQUEST) {
      // Passed on as is: the key data the client holds is its backend's.
      const cancel = connect(upstream.port, upstream.host, () =>
        cancel.end(startup.raw),
      );
      track(cancel);
      client.destroy();
      return;
    }
    if (code !== PROTOCOL_3) throw new Error(`protocol ${code}`);
    client.write(message('R', int32(3)));
    const reply = await reader.next();
    if (reply.type !== 'p') throw new Error('expected a password');
    const password = reply.body.subarray(0, -1).toString('utf8');
    const parameters = startupParameters(startup.body);
    const user = parameters.find(([k]) => k === 'user')?.[1] ?? '';
    const key = JSON.stringify([[...parameters].sort(), password]);
    let backend = takeIdle(key);
    if (!backend) {
      try {
        backend = await openBackend(upstream, startup.raw, user, password);
        backend.generation = generation;
        backendsOpened++;
      } catch (error) {
        if (error instanceof ServerRefusal) client.end(error.response);
        else client.destroy();
        return;
      }
      track(backend.socket);
      backend.socket.setKeepAlive(true);
    }
    const early = reader.release();
    if (client.destroyed) {
      // Gone while its backend was being opened: the backend is still idle.
      putIdle(key, backend);
      return;
    }
    const greeting = [
      message('R', int32(0)),
      ...[...backend.parameters].map(([name, value]) =>
        message('S', cstring(name), cstring(value)),
      ),
      backend.keyData,
      message('Z', Buffer.from('I')),
    ];
    client.write(Buffer.concat(greeting));
    lend(client, backend, key, early);
  };

  const server = createServer((socket) => {
    track(socket);
    socket.setNoDelay(true);
    socket.once('data', (first: Buffer) => {
      if (!first.subarray(0, 8).equals(SSL_REQUEST)) {
        socket.destroy();
        return;
      }
      socket.write('S');
      const secure = new TLSSocket(socket, {
        isServer: true,
        secureContext: context,
      });
      secure.on('error', () => socket.destroy());
      serve(secure).catch(() => secure.destroy());
    });
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(typeof address === 'object' && address ? address.port : 0);
    });
  });
  const closeIdle = () => {
    for (const list of idle.values()) {
      for (const b of list.splice(0)) b.socket.end(message('X'));
    }
  };
  return {
    host: 'localhost',
    port,
    caFile,
    get backendsOpened() {
      return backendsOpened;
    },
    get idleBackends() {
      return [...idle.values()].reduce((n, list) => n + list.length, 0);
    },
    drain() {
      generation++;
      closeIdle();
    },
    stop: () =>
      new Promise((resolve) => {
        closeIdle();
        for (const socket of sockets) socket.destroy();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
