/**
 * The one configuration schema. Nothing else reads `process.env`: entry points
 * call `getConfig()` and pass what a domain function needs as arguments.
 * getConfig() parses each variable when it is first read (a Lambda function
 * reads a handful of them; building and parsing all costs its cold start),
 * so a bad variable fails the first read of it, naming it; parseConfig()
 * checks a whole environment at once and lists every bad variable.
 */
import {
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
} from './ingest/bridge/options.ts';
import { DNS_1123_LABEL, UUID_PATTERN } from './patterns.ts';
import * as z from './zod.ts';

/**
 * Days of event history kept and read (the spec's 14-day timeline), unless
 * `EVENT_HISTORY_DAYS` says otherwise; the one place the number is written.
 */
export const DEFAULT_EVENT_HISTORY_DAYS = 14;

/**
 * The spec's defaults for the sweeps: a cluster silent this many minutes is
 * disconnected, and the 24-hour events list keeps this many hours, unless
 * `STALE_CLUSTER_MINUTES` / `EVENT_RETENTION_HOURS` say otherwise.
 */
export const DEFAULT_STALE_CLUSTER_MINUTES = 15;
export const DEFAULT_EVENT_RETENTION_HOURS = 24;

const bool = () =>
  z.pipe(
    z.enum(['true', 'false', '1', '0']),
    z.transform((v) => v === 'true' || v === '1'),
  );
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().check(z.int(), z.minimum(min), z.maximum(max));

/** A DNS-1123 label, as the inventory subject's slugs must be. */
const dnsLabel = () =>
  z
    .string()
    .check(
      z.regex(
        DNS_1123_LABEL,
        "must be a DNS-1123 label (lowercase letters, digits and '-')",
      ),
    );

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};
/** A Go-style duration ("5m", "90s", "1h30m"), as milliseconds. */
const duration = (minMs: number) =>
  z.pipe(
    z.pipe(
      z.string(),
      z.transform((text, ctx) => {
        const parts = [...text.matchAll(/(\d+)(ms|s|m|h)/g)];
        const whole = parts.map((p) => p[0]).join('');
        if (parts.length === 0 || whole !== text) {
          ctx.issues.push({
            code: 'custom',
            message: 'must be a duration such as 30s, 5m or 1h',
            input: text,
          });
          return z.NEVER;
        }
        return parts.reduce(
          (ms, [, n, unit]) =>
            ms + Number(n) * (DURATION_UNITS_MS[unit ?? 'ms'] ?? 1),
          0,
        );
      }),
    ),
    z.number().check(z.minimum(minMs, `must be at least ${minMs / 1000}s`)),
  );

/** A comma-separated list; blanks dropped ("a, b,,c" → a, b, c). */
const csv = () =>
  z.pipe(
    z.string(),
    z.transform((text) =>
      text
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s !== ''),
    ),
  );

/**
 * A JSON object in one variable: group role name → the Secrets Manager ARN
 * of its login's secret. Only the shape is checked here; which group roles
 * exist is shared/db/roles.ts's business.
 */
const loginSecrets = () =>
  z.pipe(
    z.pipe(
      z.string(),
      z.transform((text, ctx) => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          ctx.issues.push({
            code: 'custom',
            message:
              'must be a JSON object mapping group role names to secret ARNs',
            input: text,
          });
          return z.NEVER;
        }
      }),
    ),
    z.record(
      z.string().check(z.regex(/^[a-z_][a-z0-9_]{0,62}$/)),
      z
        .string()
        .check(
          z.regex(
            /^arn:[a-z-]+:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/,
            'must be a Secrets Manager secret ARN',
          ),
        ),
      {
        error: (issue) =>
          issue.code === 'invalid_key'
            ? 'a group role name is lowercase letters, digits and _'
            : issue.code === 'invalid_type'
              ? 'must be a JSON object mapping group role names to secret ARNs'
              : undefined,
      },
    ),
  );

const logLevel = z._default(
  z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT']),
  'INFO',
);

/**
 * Every variable and its schema, the one definition of the configuration.
 * Each schema is built when first needed: a function reads a handful of
 * the variables, and building all of them costs its cold start ~10 ms.
 */
const VARIABLES = {
  // Database: a URL locally; in AWS the host (RDS Proxy) and a secret ARN.
  DATABASE_URL: () => z.optional(z.string()),
  DATABASE_SECRET_ARN: () => z.optional(z.string()),
  DATABASE_HOST: () => z.optional(z.string()),
  DATABASE_PORT: () => z._default(int(1, 65535), 5432),
  DATABASE_NAME: () => z._default(z.string(), 'inventory'),
  DATABASE_POOL_MAX: () => z._default(int(1, 100), 4),
  /** The migrate step only: each application login's secret, by group role. */
  DATABASE_LOGIN_SECRETS: () => z.optional(loginSecrets()),

  /**
   * Lambda: the Parameters and Secrets extension's local port, set when the
   * function has the extension (infra/constructs/service-function.ts); its
   * secrets are then read through it (shared/secret-value.ts).
   */
  PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: () => z.optional(int(1, 65535)),
  /**
   * Lambda: the execution role's credentials; the session token is also the
   * extension's auth. SigV4 (shared/metrics/http.ts) signs with them when
   * set, without loading the SDK's default credential chain.
   */
  AWS_ACCESS_KEY_ID: () => z.optional(z.string()),
  AWS_SECRET_ACCESS_KEY: () => z.optional(z.string()),
  AWS_SESSION_TOKEN: () => z.optional(z.string()),
  /** Lambda: where the bundle was unpacked (migrate's migrations/). */
  LAMBDA_TASK_ROOT: () => z.optional(z.string()),

  // NATS and the bridge.
  // Where NATS is and how to log in (shared/nats-login.ts): NATS_URL with
  // NATS_CREDS and NATS_CA, or the NATS secret ({url, creds, ca}): its JSON
  // in NATS_SECRET (the bridge, as ECS injects it) or its name or ARN in
  // NATS_SECRET_ID (the API's live reads, read through the extension).
  NATS_URL: () => z.optional(z.string()),
  NATS_CREDS: () => z.optional(z.string()),
  NATS_CA: () => z.optional(z.string()),
  NATS_SECRET: () => z.optional(z.string()),
  NATS_SECRET_ID: () => z.optional(z.string()),
  NATS_STREAM: () => z._default(z.string(), DEFAULT_STREAM),
  NATS_CONSUMER: () => z._default(z.string(), DEFAULT_CONSUMER),
  NATS_SUBJECT_FILTER: () => z._default(z.string(), DEFAULT_SUBJECT_FILTER),
  /** Create the stream and consumer when missing (local stack, tests). */
  NATS_CREATE_STREAM: () => z._default(bool(), false),
  BRIDGE_HEALTH_PORT: () => z._default(int(0, 65535), 8080),

  // Queue and claim check.
  AWS_REGION: () => z._default(z.string(), 'us-east-1'),
  QUEUE_URL: () => z.optional(z.string()),
  SQS_ENDPOINT: () => z.optional(z.string()),
  S3_ENDPOINT: () => z.optional(z.string()),
  CLAIM_BUCKET: () => z.optional(z.string()),
  /** Bodies above this go to S3; the queue's MaximumMessageSize. */
  QUEUE_MAX_MESSAGE_BYTES: () =>
    z._default(int(1024, 1024 * 1024), 1024 * 1024),
  /**
   * Receives before the queue moves a message to its dead-letter queue; the
   * sync records a message failing on its last receive in ingest_rejections.
   */
  QUEUE_MAX_RECEIVE_COUNT: () => z._default(int(1, 1000), 5),

  // Sync and sweeps.
  SYNC_TIMEOUT_MS: () => z._default(int(1000), 60_000),
  STALE_CLUSTER_MINUTES: () =>
    z._default(int(1), DEFAULT_STALE_CLUSTER_MINUTES),
  EVENT_RETENTION_HOURS: () =>
    z._default(int(1), DEFAULT_EVENT_RETENTION_HOURS),
  /** How long the live-read audit trail is kept. */
  AUDIT_RETENTION_DAYS: () => z._default(int(1), 400),
  EVENT_HISTORY_DAYS: () => z._default(int(1, 366), DEFAULT_EVENT_HISTORY_DAYS),
  CHANGE_RETENTION_DAYS: () => z._default(int(1), 90),

  // API.
  PORT: () => z._default(int(0, 65535), 3000),
  JWT_ISSUER: () => z.optional(z.string()),
  JWT_AUDIENCE: () => z.optional(z.string()),
  METRICS_URL: () => z.optional(z.url()),
  // Metrics store (shared/metrics/from-config.ts): the series writes after
  // each sync and their format; a tenant header; SigV4 (AMP); deadlines.
  METRICS_WRITE_URL: () => z.optional(z.url()),
  METRICS_WRITE_FORMAT: () =>
    z._default(z.enum(['remote_write', 'vm_import']), 'remote_write'),
  METRICS_TENANT_HEADER: () =>
    z.optional(
      z
        .string()
        .check(
          z.regex(/^[A-Za-z0-9-]+: ?\S.*$/, 'must be "Header-Name: value"'),
        ),
    ),
  METRICS_SIGV4_REGION: () =>
    z.optional(
      z
        .string()
        .check(z.regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region')),
    ),
  METRICS_QUERY_TIMEOUT_MS: () => z._default(int(100, 60_000), 10_000),
  METRICS_WRITE_TIMEOUT_MS: () => z._default(int(100, 10_000), 2_000),

  // The cluster agent (functions/agent/main.ts; shared/agent/from-config.ts).
  // It publishes on proxima.{PROXIMA_CLIENT}.{PROXIMA_ENVIRONMENT}.{agent id}.kubernetes.
  PROXIMA_CLIENT: () => z.optional(dnsLabel()),
  PROXIMA_ENVIRONMENT: () => z.optional(dnsLabel()),
  /** The agent's UUID; unset: read from PROXIMA_AGENT_ID_FILE, generated there on first run. */
  PROXIMA_AGENT_ID: () =>
    z.optional(z.string().check(z.regex(UUID_PATTERN, 'must be a UUID'))),
  /** Where a generated agent id is kept; default {DATA_DIR}/agent-id. */
  PROXIMA_AGENT_ID_FILE: () => z.optional(z.string()),
  /** The cluster's name in the inventory; default the kube-context's cluster name. */
  PROXIMA_CLUSTER_NAME: () =>
    z.optional(z.string().check(z.minLength(1), z.maxLength(253))),
  PROXIMA_K8S_SYNC_INTERVAL: () => z._default(duration(10_000), 5 * 60_000),
  PROXIMA_K8S_EXCLUDE_NAMESPACES: () => z._default(csv(), []),
  PROXIMA_K8S_POD_LIMIT: () => z._default(int(1, 1_000_000), 5000),
  /** Items per page of each list (the apiserver's `limit`). */
  PROXIMA_K8S_PAGE_SIZE: () => z._default(int(1, 10_000), 500),
  /** The agent's /healthz and /metrics; 0 picks a free port. */
  AGENT_HEALTH_PORT: () => z._default(int(0, 65535), 8081),

  // Local stack.
  DATA_DIR: () => z._default(z.string(), '.data'),

  LOG_LEVEL: () => logLevel,
} satisfies Record<string, () => z.ZodMiniType>;

type Variables = typeof VARIABLES;

/** The whole schema (every variable), as parseConfig checks it. */
export function configSchema() {
  const shape = {} as { [K in keyof Variables]: ReturnType<Variables[K]> };
  for (const name of Object.keys(VARIABLES) as (keyof Variables)[]) {
    (shape as Record<string, z.ZodMiniType>)[name] = VARIABLES[name]();
  }
  return z.object(shape);
}

export type Config = z.infer<ReturnType<typeof configSchema>>;

export class ConfigError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

function describe(issues: z.core.$ZodIssue[], prefix: PropertyKey[] = []) {
  return issues
    .map((issue) => `${[...prefix, ...issue.path].join('.')}: ${issue.message}`)
    .join('\n');
}

/** Parses an environment; lists every bad variable in one error. */
export function parseConfig(env: Record<string, string | undefined>): Config {
  const result = configSchema().safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      `invalid configuration:\n${describe(result.error.issues)}`,
    );
  }
  return result.data;
}

/**
 * A configuration whose variables are each parsed when first read (and
 * kept): a bad one fails that read, naming it.
 */
function parsedOnRead(env: Record<string, string | undefined>): Config {
  const config = {};
  for (const name of Object.keys(VARIABLES) as (keyof Variables)[]) {
    Object.defineProperty(config, name, {
      enumerable: true,
      configurable: true,
      get() {
        const result = VARIABLES[name]().safeParse(env[name]);
        if (!result.success) {
          throw new ConfigError(
            `invalid configuration:\n${describe(result.error.issues, [name])}`,
          );
        }
        Object.defineProperty(config, name, {
          value: result.data,
          enumerable: true,
        });
        return result.data;
      },
    });
  }
  return config as Config;
}

let cached: Config | undefined;

/** The process's configuration, each variable parsed on its first read. */
export function getConfig(): Config {
  cached ??= parsedOnRead(process.env);
  return cached;
}

/**
 * The process's configuration checked whole, every bad variable named at
 * once: for a long-running process (the agent, the bridge), whose start is
 * where a bad variable should show. getConfig() returns it from then on.
 */
export function checkConfig(): Config {
  cached = parseConfig(process.env);
  return cached;
}

/**
 * LOG_LEVEL alone, for the logger, which is built when first imported:
 * parsing (and caching) the whole configuration that early would fix it
 * before an entry point or a test has set its variables. A bad value is the
 * default here; getConfig() refuses it when LOG_LEVEL is read.
 */
export function logLevelOf(
  env: Record<string, string | undefined> = process.env,
): z.output<typeof logLevel> {
  const result = logLevel.safeParse(env.LOG_LEVEL);
  return result.success ? result.data : 'INFO';
}
