/**
 * NATS setup: the connection, and the stream and durable pull consumer the
 * bridge reads (created when allowed, else required).
 */
import {
  AckPolicy,
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  jetstreamManager,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';
import {
  connect,
  credsAuthenticator,
  type NatsConnection,
  nanos,
} from '@nats-io/transport-node';
import { natsLoginOptions } from '../../nats-login.ts';
import { logger } from '../../observability/logger.ts';
import {
  type BridgeOptions,
  BridgeSetupError,
  type NatsConnectOptions,
} from './options.ts';

/**
 * Subjects of the stream when the bridge creates (or owns) it: telemetry
 * subjects have exactly five tokens. Never `proxima.>`: that would capture
 * the live reads' `proxima.system.commands.{agent_id}` requests, and the
 * stream's publish acknowledgement would answer every request before the
 * agent could (wire contract, Transport).
 */
export const STREAM_SUBJECTS = ['proxima.*.*.*.*'];
/**
 * How long a stream the bridge owns keeps a message, forwarded or not: an
 * acknowledgement does not remove a message from a limits stream, so
 * without an age every inventory ever published stayed on disk (a large
 * cluster every 5 minutes, ~345 MB a day). A day covers a bridge stopped
 * overnight; an inventory older than that has been superseded by the ones
 * its agent sent since.
 */
export const OWNED_STREAM_MAX_AGE_MS = 24 * 3_600_000;
/** A subject the stream must never capture (the live reads' requests). */
const COMMAND_SUBJECT_PROBE = 'proxima.system.commands.probe';
/**
 * Short, so that what a dead bridge held comes back soon (a restarted bridge
 * waits this long before its first pull, see Bridge.start); every message a
 * live bridge holds is kept alive with `working()` every third of it, so a
 * slow send (an 8 MB S3 upload with SDK retries) is never redelivered.
 */
export const DEFAULT_ACK_WAIT_MS = 10_000;
/**
 * With the backoff below (1 s doubling to 60 s) this rides out about an hour
 * and a half of queue outage. A snapshot still unsent after that is stale
 * (the agent has sent newer ones): it is recorded as rejected, not lost.
 */
export const DEFAULT_MAX_DELIVER = 100;

/** What the consumer's settings tell the rest of the bridge. */
export interface ConsumerSettings {
  /** Stream name and creation time: keeps two incarnations' dedup ids and claim keys apart. */
  scope: string;
  /** The consumer's max_deliver (-1: unlimited). */
  maxDeliver: number;
  ackWaitMs: number;
  /** num_pending when the consumer was looked up. */
  pending: number;
  /** num_ack_pending then: delivered and not acked, e.g. held by a dead process. */
  ackPending: number;
}

/** Connects with a name and reconnects forever. */
export async function connectNats(
  options: NatsConnectOptions,
): Promise<NatsConnection> {
  return connect({
    ...(await natsLoginOptions(options, credsAuthenticator)),
    name: options.name ?? 'k8s-inventory-bridge',
    maxReconnectAttempts: -1,
    reconnectTimeWait: 2_000,
    // ECS may start the bridge before NATS answers: keep trying.
    waitOnFirstConnect: options.waitOnFirstConnect ?? true,
  });
}

export function isConnectOptions(
  value: NatsConnection | NatsConnectOptions,
): value is NatsConnectOptions {
  return typeof (value as NatsConnectOptions).url === 'string';
}

/** Servers before 2.11 ignore a "+TERM" that carries a reason. */
export function acceptsTermReason(nc: NatsConnection): boolean {
  const [major = 0, minor = 0] = (nc.info?.version ?? '')
    .split('.')
    .map(Number);
  return major > 2 || (major === 2 && minor >= 11);
}

type ConsumerSetup = Pick<
  BridgeOptions,
  | 'stream'
  | 'consumer'
  | 'subjectFilter'
  | 'createStream'
  | 'ackWaitMs'
  | 'maxDeliver'
>;

/** Checks or creates the stream and the durable consumer; reads its settings. */
export async function prepareConsumer(
  nc: NatsConnection,
  setup: ConsumerSetup,
): Promise<ConsumerSettings> {
  const { stream, consumer } = setup;
  const jsm = await jetstreamManager(nc);
  const streamInfo = await ensureStream(jsm, setup);
  // A recreated stream restarts its sequences; the creation time keeps
  // dedup ids and claim keys of two incarnations apart.
  const created = Date.parse(streamInfo.created);
  const scope = Number.isNaN(created)
    ? stream
    : `${stream}-${created.toString(36)}`;

  let info = await findConsumer(jsm, stream, consumer);
  if (info === undefined) {
    if (!setup.createStream) {
      throw new BridgeSetupError(
        `durable consumer ${consumer} on stream ${stream} does not exist (create it, or set NATS_CREATE_STREAM)`,
      );
    }
    info = await jsm.consumers.add(stream, {
      durable_name: consumer,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: setup.subjectFilter,
      ack_wait: nanos(setup.ackWaitMs ?? DEFAULT_ACK_WAIT_MS),
      max_deliver: setup.maxDeliver ?? DEFAULT_MAX_DELIVER,
    });
    logger.info('consumer created', { stream, consumer });
  } else {
    if (info.config.filter_subject !== setup.subjectFilter) {
      logger.warn('consumer filter differs from configuration', {
        consumer,
        filter: info.config.filter_subject,
        configured: setup.subjectFilter,
      });
    }
    // A consumer the bridge owns is brought to its ack wait (a local one
    // made with the old 60 s); a platform's consumer is never changed.
    const ackWait = nanos(setup.ackWaitMs ?? DEFAULT_ACK_WAIT_MS);
    if (setup.createStream && info.config.ack_wait !== ackWait) {
      info = await jsm.consumers.update(stream, consumer, {
        ack_wait: ackWait,
      });
      logger.info('consumer ack wait updated', { stream, consumer });
    }
  }
  return {
    scope,
    maxDeliver: info.config.max_deliver ?? -1,
    ackWaitMs: Math.round((info.config.ack_wait ?? 0) / 1e6) || 30_000,
    pending: info.num_pending,
    ackPending: info.num_ack_pending,
  };
}

/** The consumer's num_pending now. */
export async function consumerPending(
  nc: NatsConnection,
  stream: string,
  consumer: string,
): Promise<number> {
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const info = await jsm.consumers.info(stream, consumer);
  return info.num_pending;
}

async function ensureStream(
  jsm: JetStreamManager,
  setup: Pick<ConsumerSetup, 'stream' | 'createStream'>,
) {
  const { stream } = setup;
  try {
    const info = await jsm.streams.info(stream);
    return await checkStreamSubjects(jsm, info, setup.createStream);
  } catch (error) {
    if (!isApiError(error, JetStreamApiCodes.StreamNotFound)) throw error;
    if (!setup.createStream) {
      throw new BridgeSetupError(
        `stream ${stream} does not exist (create it, or set NATS_CREATE_STREAM)`,
        { cause: error },
      );
    }
    const info = await jsm.streams.add({
      name: stream,
      storage: StorageType.File,
      ...OWNED_STREAM_LIMITS,
    });
    logger.info('stream created', {
      stream,
      subjects: STREAM_SUBJECTS,
      maxAgeMs: OWNED_STREAM_MAX_AGE_MS,
    });
    return info;
  }
}

/** What a stream the bridge owns is created with, and brought to. */
const OWNED_STREAM_LIMITS = {
  subjects: STREAM_SUBJECTS,
  max_age: nanos(OWNED_STREAM_MAX_AGE_MS),
};

/**
 * A stream the bridge owns (createStream) is brought to STREAM_SUBJECTS and
 * its age limit at start, so a local stack created with the old `proxima.>`
 * stops swallowing live-read requests, and one created without an age
 * stops keeping every inventory. A platform's stream is never changed; one
 * that captures the command subjects is logged at ERROR, since every live
 * read would then be answered by JetStream instead of the agent.
 */
async function checkStreamSubjects(
  jsm: JetStreamManager,
  info: StreamInfo,
  owned: boolean,
): Promise<StreamInfo> {
  const subjects = info.config.subjects ?? [];
  if (owned) {
    const same =
      subjects.length === STREAM_SUBJECTS.length &&
      STREAM_SUBJECTS.every((subject) => subjects.includes(subject)) &&
      info.config.max_age === OWNED_STREAM_LIMITS.max_age;
    if (same) return info;
    const updated = await jsm.streams.update(
      info.config.name,
      OWNED_STREAM_LIMITS,
    );
    logger.info('stream updated', {
      stream: info.config.name,
      from: { subjects, maxAgeMs: info.config.max_age / 1_000_000 },
      to: { subjects: STREAM_SUBJECTS, maxAgeMs: OWNED_STREAM_MAX_AGE_MS },
    });
    return updated;
  }
  if (subjects.some((s) => subjectMatches(s, COMMAND_SUBJECT_PROBE))) {
    logger.error(
      'stream captures proxima.system.commands.*: live reads will fail',
      { stream: info.config.name, subjects },
    );
  }
  return info;
}

/** Whether the NATS subject `pattern` (with `*` and `>`) matches `subject`. */
export function subjectMatches(pattern: string, subject: string): boolean {
  const want = pattern.split('.');
  const have = subject.split('.');
  for (let i = 0; i < want.length; i++) {
    if (want[i] === '>') return have.length > i;
    if (i >= have.length) return false;
    if (want[i] !== '*' && want[i] !== have[i]) return false;
  }
  return want.length === have.length;
}

async function findConsumer(
  jsm: JetStreamManager,
  stream: string,
  consumer: string,
) {
  try {
    return await jsm.consumers.info(stream, consumer);
  } catch (error) {
    if (isApiError(error, JetStreamApiCodes.ConsumerNotFound)) return undefined;
    throw error;
  }
}

export function isApiError(error: unknown, code: number): boolean {
  return error instanceof JetStreamApiError && error.code === code;
}
