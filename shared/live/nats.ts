/**
 * The API's NATS connection for live reads: one per process (per Lambda
 * instance), opened on first use from the configuration and shared by every
 * request. Locally NATS_URL (with NATS_CREDS and NATS_CA); in AWS the
 * bridge's NATS secret (NATS_SECRET_ID, its name or ARN; JSON `{url, creds,
 * ca}`, read once per cold start, shared/secret-value.ts). A `ca` is how a
 * server whose certificate a private authority signed is trusted: the
 * functions' NODE_EXTRA_CA_CERTS holds the database's bundle.
 * No configured server, a server that cannot be reached, or a connection
 * that is down right now: there is no connection, and the route answers
 * 503 live_unavailable instead of letting the request wait out its 15 s.
 *
 * `kubeQuery` sends one request and maps NATS's failures to the spec's
 * codes: no responder 502 agent_unreachable, no reply in time 504
 * agent_timeout, the connection gone 503 live_unavailable.
 */
import type { NatsConnection } from '@nats-io/transport-node';
import type { Config } from '../config.ts';
import { LiveReadError } from '../errors.ts';
import {
  endNatsConnection,
  NatsLoginError,
  type NatsTarget,
  natsLoginOptions,
  natsTargetOf,
  parseNatsSecret,
} from '../nats-login.ts';
import { logger } from '../observability/logger.ts';
import { readSecretString } from '../secret-value.ts';
import { commandSubject } from './kube-query.ts';

/**
 * The NATS client, loaded when a live read first connects: a route that
 * never does (the audit list, a read refused before it reaches the agent)
 * does not evaluate it at cold start (~10 ms of CPU).
 */
const natsClient = () => import('@nats-io/transport-node');

/** How long a first connection may take before the read is refused. */
const CONNECT_TIMEOUT_MS = 3_000;

export interface LiveNats {
  connection: NatsConnection;
  /** False while the client is reconnecting: requests would only wait. */
  connected(): boolean;
}

/** Opens a connection that reconnects forever and reports its state. */
export async function openLiveNats(target: NatsTarget): Promise<LiveNats> {
  const { connect, credsAuthenticator } = await natsClient();
  const connection = await connect({
    ...(await natsLoginOptions(target, credsAuthenticator)),
    name: 'k8s-inventory-api',
    timeout: CONNECT_TIMEOUT_MS,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    // Otherwise every request builds two errors up front (their stack
    // traces, in case it fails: about 0.1 ms a read). Every request starts
    // in kubeQuery, and its failures are mapped by type and logged by name.
    noAsyncTraces: true,
  });
  let up = true;
  void (async () => {
    for await (const status of connection.status()) {
      if (status.type === 'disconnect' || status.type === 'reconnecting') {
        up = false;
      } else if (status.type === 'reconnect') {
        up = true;
      }
    }
  })();
  return {
    connection,
    connected: () => up && !connection.isClosed(),
  };
}

/** The target the configuration names (reads the secret in AWS). */
export async function resolveLiveNatsTarget(
  config: Config,
): Promise<NatsTarget | undefined> {
  const configured = natsTargetOf(config);
  if (configured) return configured;
  if (!config.NATS_SECRET_ID) return undefined;
  return parseNatsSecret(await readSecretString(config, config.NATS_SECRET_ID));
}

/**
 * Opens the connection on first use and keeps it; a failed attempt is
 * forgotten, so the next request tries again.
 */
export class LiveNatsProvider {
  #current: Promise<LiveNats | undefined> | undefined;
  readonly #target: () => Promise<NatsTarget | undefined>;

  constructor(target: () => Promise<NatsTarget | undefined>) {
    this.#target = target;
  }

  /** The open connection, or undefined when there is none to be had. */
  async get(): Promise<LiveNats | undefined> {
    this.#current ??= this.#open();
    const nats = await this.#current;
    if (nats?.connection.isClosed()) {
      this.#current = undefined;
      return undefined;
    }
    return nats;
  }

  async #open(): Promise<LiveNats | undefined> {
    try {
      const target = await this.#target();
      if (target === undefined) return undefined;
      return await openLiveNats(target);
    } catch (error) {
      // Not the target itself: a URL can carry a password. A login that
      // cannot be read says which field and why, and nothing of its value.
      logger.warn('live reads: no NATS connection', {
        error: error instanceof Error ? error.name : String(error),
        ...(error instanceof NatsLoginError ? { reason: error.message } : {}),
      });
      this.#current = undefined;
      return undefined;
    }
  }

  /**
   * Ends the connection (shutdown, tests), whether or not its server is
   * still there: a terminal's Ctrl-C stops the local stack's nats-server
   * with the stack.
   */
  async close(): Promise<void> {
    const nats = await this.#current;
    this.#current = undefined;
    if (nats) await endNatsConnection(nats.connection, nats.connected());
  }
}

function unavailable(cause?: unknown): LiveReadError {
  return new LiveReadError(
    'live_unavailable',
    'live reads are unavailable: the backend has no NATS connection',
    { cause },
  );
}

/**
 * Sends `request` to the agent and returns its reply's bytes; the spec's
 * error for each way NATS can fail.
 */
export async function kubeQuery(
  nats: LiveNats | undefined,
  agentId: string,
  request: unknown,
  timeoutMs: number,
): Promise<Uint8Array> {
  if (nats === undefined || !nats.connected()) throw unavailable();
  try {
    const reply = await nats.connection.request(
      commandSubject(agentId),
      JSON.stringify(request),
      { timeout: timeoutMs },
    );
    return reply.data;
  } catch (error) {
    throw mapRequestError(await natsClient(), error, timeoutMs);
  }
}

function mapRequestError(
  {
    ClosedConnectionError,
    ConnectionError,
    DrainingConnectionError,
    NoRespondersError,
    RequestError,
    TimeoutError,
  }: Awaited<ReturnType<typeof natsClient>>,
  error: unknown,
  timeoutMs: number,
): LiveReadError {
  const cause = error instanceof Error ? error.cause : undefined;
  if (
    error instanceof NoRespondersError ||
    cause instanceof NoRespondersError ||
    (error instanceof RequestError && error.isNoResponders())
  ) {
    return new LiveReadError(
      'agent_unreachable',
      "the cluster's agent is not listening for live reads",
      { cause: error },
    );
  }
  if (error instanceof TimeoutError || cause instanceof TimeoutError) {
    return new LiveReadError(
      'agent_timeout',
      `the cluster's agent did not answer within ${Math.round(timeoutMs / 1000)} s`,
      { cause: error },
    );
  }
  if (
    error instanceof ClosedConnectionError ||
    error instanceof DrainingConnectionError ||
    error instanceof ConnectionError
  ) {
    return unavailable(error);
  }
  logger.error('live read: unexpected NATS failure', {
    error: error instanceof Error ? error.name : String(error),
  });
  return unavailable(error);
}

let shared = new LiveNatsProvider(async () => {
  const { getConfig } = await import('../config.ts');
  return resolveLiveNatsTarget(getConfig());
});

/** The process's live-read connection (from the configuration by default). */
export function getLiveNats(): Promise<LiveNats | undefined> {
  return shared.get();
}

/**
 * Uses `target` for every later live read (the local stack's spawned
 * server, tests); undefined: no NATS at all. The previous connection drains.
 */
export async function setLiveNatsTarget(
  target: NatsTarget | undefined,
): Promise<void> {
  const previous = shared;
  shared = new LiveNatsProvider(async () => target);
  await previous.close();
}
