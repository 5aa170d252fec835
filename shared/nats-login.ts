/**
 * How a NATS client reaches the server and logs in: its URL, the login's
 * `.creds` (NATS_CREDS, the NATS secret's `creds`) and the certificate
 * authority its TLS certificate chains to (NATS_CA, the secret's `ca`), each
 * the content or a file's path. The agent, the bridge and the live reads
 * read them through here, so one value works for all three, and the NATS
 * secret (`{url, creds, ca}`) is read by one rule wherever it is read.
 */
import type { Authenticator, NatsConnection } from '@nats-io/transport-node';
import { type Config, ConfigError } from './config.ts';

/** Where a client connects and with what; creds and ca optional. */
export interface NatsTarget {
  url: string;
  /** A `.creds` file's content or path; empty or absent: no login. */
  creds?: string | undefined;
  /**
   * PEM of the certificate authority the server's certificate chains to,
   * or a file's path; empty or absent: the system's trusted roots. Given,
   * the connection must be TLS.
   */
  ca?: string | undefined;
}

/**
 * A login that cannot be read: creds or an authority neither given nor
 * readable, a NATS secret without its url. Its message names the field and
 * the reason, never a value or a path, so it may be logged.
 */
export class NatsLoginError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'NatsLoginError';
  }
}

/** Every `.creds` file holds the user's JWT under this armour line. */
const CREDS_CONTENT = 'BEGIN NATS USER JWT';
const CERTIFICATE = '-----BEGIN CERTIFICATE-----';

/**
 * The `.creds` content as the client's authenticator takes it; undefined
 * when there is none to log in with (absent or blank: a server without
 * authentication, and the NATS secret's `creds` of `""`).
 */
export async function credsBytes(
  creds: string | undefined,
): Promise<Uint8Array | undefined> {
  if (!creds?.trim()) return undefined;
  const text = creds.includes(CREDS_CONTENT)
    ? creds
    : await readNamedFile(
        creds.trim(),
        "the NATS credentials are neither a .creds file's content nor a file that can be read",
      );
  // The client's parser wants a newline after each block's END line; a
  // file whose seed block comes last (as NATS's jwt.js writes it) ends on
  // that line, and a secret store or a shell can drop the final newline.
  return new TextEncoder().encode(text.endsWith('\n') ? text : `${text}\n`);
}

/**
 * The certificate authority's PEM; undefined when none is set (absent or
 * blank). A value that is neither a certificate nor a file holding one is
 * refused here, not left for the handshake to fail on.
 */
export async function caPem(
  ca: string | undefined,
): Promise<string | undefined> {
  if (!ca?.trim()) return undefined;
  const what =
    'the NATS certificate authority is neither a PEM certificate nor a file that holds one';
  const text = ca.includes(CERTIFICATE)
    ? ca
    : await readNamedFile(ca.trim(), what);
  if (!text.includes(CERTIFICATE))
    throw new NatsLoginError(`${what} (no certificate)`);
  return text;
}

async function readNamedFile(path: string, what: string): Promise<string> {
  try {
    // Through getBuiltinModule: in AWS the secret holds the content, and
    // loading node:fs/promises on import was ~1.4 ms of a live read's
    // cold start.
    const { readFile } = process.getBuiltinModule('node:fs/promises');
    return await readFile(path, 'utf8');
  } catch (error) {
    // Neither the path nor anything read: a misplaced secret is still one.
    throw new NatsLoginError(
      `${what} (${(error as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      { cause: error },
    );
  }
}

/**
 * The connect options for `target`'s login: the `.creds` authenticator
 * (made by the client's `credsAuthenticator`, which the live reads load only
 * when they connect) and TLS verified against its certificate authority.
 */
export async function natsLoginOptions(
  target: NatsTarget,
  credsAuthenticator: (creds: Uint8Array) => Authenticator,
): Promise<{
  servers: string;
  authenticator?: Authenticator;
  tls?: { ca: string };
}> {
  const [creds, ca] = await Promise.all([
    credsBytes(target.creds),
    caPem(target.ca),
  ]);
  return {
    servers: target.url,
    ...(creds ? { authenticator: credsAuthenticator(creds) } : {}),
    ...(ca ? { tls: { ca } } : {}),
  };
}

/**
 * The NATS secret (`{url, creds, ca}`, JSON), as the live reads read it
 * through the extension and ECS hands the bridge its text. Errors name the
 * field, never a value.
 */
export function parseNatsSecret(text: string | undefined): NatsTarget {
  let value: unknown;
  try {
    value = JSON.parse(text ?? '');
  } catch (error) {
    throw new NatsLoginError('the NATS secret is not JSON', { cause: error });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new NatsLoginError('the NATS secret is not a JSON object');
  }
  const { url, creds, ca } = value as Record<string, unknown>;
  if (typeof url !== 'string' || url.trim() === '') {
    throw new NatsLoginError('the NATS secret has no url');
  }
  for (const [name, field] of [
    ['creds', creds],
    ['ca', ca],
  ] as const) {
    if (field !== undefined && field !== null && typeof field !== 'string') {
      throw new NatsLoginError(`the NATS secret's ${name} is not a string`);
    }
  }
  return {
    url,
    ...(typeof creds === 'string' ? { creds } : {}),
    ...(typeof ca === 'string' ? { ca } : {}),
  };
}

/**
 * The target the configuration names without reading a secret: NATS_URL
 * with NATS_CREDS and NATS_CA, or NATS_SECRET, the NATS secret's JSON as
 * ECS injects it; undefined when neither is set. Both set is refused: one
 * of them would be ignored.
 */
export function natsTargetOf(
  config: Pick<Config, 'NATS_URL' | 'NATS_CREDS' | 'NATS_CA' | 'NATS_SECRET'>,
): NatsTarget | undefined {
  if (config.NATS_URL && config.NATS_SECRET) {
    throw new ConfigError(
      'invalid configuration:\nNATS_SECRET: set NATS_URL (with NATS_CREDS and NATS_CA) or NATS_SECRET, not both',
    );
  }
  if (config.NATS_URL) {
    return {
      url: config.NATS_URL,
      ...(config.NATS_CREDS ? { creds: config.NATS_CREDS } : {}),
      ...(config.NATS_CA ? { ca: config.NATS_CA } : {}),
    };
  }
  if (!config.NATS_SECRET) return undefined;
  try {
    return parseNatsSecret(config.NATS_SECRET);
  } catch (error) {
    throw new ConfigError(
      `invalid configuration:\nNATS_SECRET: ${(error as Error).message}`,
      { cause: error },
    );
  }
}

/**
 * Ends a connection as a client stops (the agent, the bridge, the live
 * reads): drains it while its server is there (pending publishes and acks
 * flushed, subscriptions ended), else closes it. With the server gone there
 * is nothing to flush: drain() rejects ("connection disconnected"), or,
 * before the client has noticed, waits for a reconnect. `connected`: what
 * the caller knows of the connection's state, when it watches it.
 */
export async function endNatsConnection(
  nc: NatsConnection,
  connected = true,
): Promise<void> {
  if (nc.isClosed()) return;
  if (!connected) return nc.close();
  await nc.drain().catch(() => nc.close());
}
