/**
 * The one configuration schema. Nothing else reads `process.env`: entry points
 * call `getConfig()` and pass what a domain function needs as arguments.
 * getConfig() parses each variable when it is first read (a Lambda function
 * reads a handful of them; building and parsing all costs its cold start),
 * so a bad variable fails the first read of it, naming it; parseConfig()
 * checks a whole environment at once and lists every bad variable.
 */
import * as z from 'zod';
import {
  DEFAULT_CONSUMER,
  DEFAULT_STREAM,
  DEFAULT_SUBJECT_FILTER,
} from './ingest/bridge/options.ts';
import { DNS_1123_LABEL, UUID_PATTERN } from './patterns.ts';

/**
 * Days of event history kept and read (the spec's 14-day timeline), unless
 * `EVENT_HISTORY_DAYS` says otherwise; the one place the number is written.
 */
export const DEFAULT_EVENT_HISTORY_DAYS = 14;

const bool = () =>
  z
    .enum(['true', 'false', '1', '0'])
    .transform((v) => v === 'true' || v === '1');
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max);

/** A DNS-1123 label, as the inventory subject's slugs must be. */
const dnsLabel = () =>
  z
    .string()
    .regex(
      DNS_1123_LABEL,
      "must be a DNS-1123 label (lowercase letters, digits and '-')",
    );

const DURATION_UNITS_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};
/** A Go-style duration ("5m", "90s", "1h30m"), as milliseconds. */
const duration = (minMs: number) =>
  z
    .string()
    .transform((text, ctx) => {
      const parts = [...text.matchAll(/(\d+)(ms|s|m|h)/g)];
      const whole = parts.map((p) => p[0]).join('');
      if (parts.length === 0 || whole !== text) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be a duration such as 30s, 5m or 1h',
        });
        return z.NEVER;
      }
      return parts.reduce(
        (ms, [, n, unit]) =>
          ms + Number(n) * (DURATION_UNITS_MS[unit ?? 'ms'] ?? 1),
        0,
      );
    })
    .pipe(z.number().min(minMs, `must be at least ${minMs / 1000}s`));

/** A comma-separated list; blanks dropped ("a, b,,c" → a, b, c). */
const csv = () =>
  z.string().transform((text) =>
    text
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
  );

/**
 * A JSON object in one variable: group role name → the Secrets Manager ARN
 * of its login's secret. Only the shape is checked here; which group roles
 * exist is shared/db/roles.ts's business.
 */
const loginSecrets = () =>
  z
    .string()
    .transform((text, ctx) => {
      try {
        return JSON.parse(text) as unknown;
      } catch {
        ctx.addIssue({
          code: 'custom',
          message:
            'must be a JSON object mapping group role names to secret ARNs',
        });
        return z.NEVER;
      }
    })
    .pipe(
      z.record(
        z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/),
        z
          .string()
          .regex(
            /^arn:[a-z-]+:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/,
            'must be a Secrets Manager secret ARN',
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

const logLevel = z
  .enum(['DEBUG', 'INFO', 'WARN', 'ERROR', 'SILENT'])
  .default('INFO');

/**
 * Every variable and its schema, the one definition of the configuration.
 * Each schema is built when first needed: a function reads a handful of
 * the variables, and building all of them costs its cold start ~10 ms.
 */
const VARIABLES = {
  // Database: a URL locally; in AWS the host (RDS Proxy) and a secret ARN.
  DATABASE_URL: () => z.string().optional(),
  DATABASE_SECRET_ARN: () => z.string().optional(),
  DATABASE_HOST: () => z.string().optional(),
  DATABASE_PORT: () => int(1, 65535).default(5432),
  DATABASE_NAME: () => z.string().default('inventory'),
  DATABASE_POOL_MAX: () => int(1, 100).default(4),
  /** The migrate step only: each application login's secret, by group role. */
  DATABASE_LOGIN_SECRETS: () => loginSecrets().optional(),

  /**
   * Lambda: the Parameters and Secrets extension's local port, set when the
   * function has the extension (infra/constructs/service-function.ts); its
   * secrets are then read through it (shared/secret-value.ts).
   */
  PARAMETERS_SECRETS_EXTENSION_HTTP_PORT: () => int(1, 65535).optional(),
  /**
   * Lambda: the execution role's credentials; the session token is also the
   * extension's auth. SigV4 (shared/metrics/http.ts) signs with them when
   * set, without loading the SDK's default credential chain.
   */
  AWS_ACCESS_KEY_ID: () => z.string().optional(),
  AWS_SECRET_ACCESS_KEY: () => z.string().optional(),
  AWS_SESSION_TOKEN: () => z.string().optional(),
  /** Lambda: where the bundle was unpacked (migrate's migrations/). */
  LAMBDA_TASK_ROOT: () => z.string().optional(),

  // NATS and the bridge.
  NATS_URL: () => z.string().optional(),
  NATS_CREDS: () => z.string().optional(),
  /** AWS, the API's live reads: the bridge's NATS secret ({url, creds}), name or ARN. */
  NATS_SECRET_ID: () => z.string().optional(),
  NATS_STREAM: () => z.string().default(DEFAULT_STREAM),
  NATS_CONSUMER: () => z.string().default(DEFAULT_CONSUMER),
  NATS_SUBJECT_FILTER: () => z.string().default(DEFAULT_SUBJECT_FILTER),
  /** Create the stream and consumer when missing (local stack, tests). */
  NATS_CREATE_STREAM: () => bool().default(false),
  BRIDGE_HEALTH_PORT: () => int(0, 65535).default(8080),

  // Queue and claim check.
  AWS_REGION: () => z.string().default('us-east-1'),
  QUEUE_URL: () => z.string().optional(),
  SQS_ENDPOINT: () => z.string().optional(),
  S3_ENDPOINT: () => z.string().optional(),
  CLAIM_BUCKET: () => z.string().optional(),
  /** Bodies above this go to S3; the queue's MaximumMessageSize. */
  QUEUE_MAX_MESSAGE_BYTES: () => int(1024, 1024 * 1024).default(1024 * 1024),
  /**
   * Receives before the queue moves a message to its dead-letter queue; the
   * sync records a message failing on its last receive in ingest_rejections.
   */
  QUEUE_MAX_RECEIVE_COUNT: () => int(1, 1000).default(5),

  // Sync and sweeps.
  SYNC_TIMEOUT_MS: () => int(1000).default(60_000),
  STALE_CLUSTER_MINUTES: () => int(1).default(15),
  EVENT_RETENTION_HOURS: () => int(1).default(24),
  /** How long the live-read audit trail is kept. */
  AUDIT_RETENTION_DAYS: () => int(1).default(400),
  EVENT_HISTORY_DAYS: () => int(1, 366).default(DEFAULT_EVENT_HISTORY_DAYS),
  CHANGE_RETENTION_DAYS: () => int(1).default(90),

  // API.
  PORT: () => int(0, 65535).default(3000),
  JWT_ISSUER: () => z.string().optional(),
  JWT_AUDIENCE: () => z.string().optional(),
  METRICS_URL: () => z.string().url().optional(),
  // Metrics store (shared/metrics/from-config.ts): the series writes after
  // each sync and their format; a tenant header; SigV4 (AMP); deadlines.
  METRICS_WRITE_URL: () => z.string().url().optional(),
  METRICS_WRITE_FORMAT: () =>
    z.enum(['remote_write', 'vm_import']).default('remote_write'),
  METRICS_TENANT_HEADER: () =>
    z
      .string()
      .regex(/^[A-Za-z0-9-]+: ?\S.*$/, 'must be "Header-Name: value"')
      .optional(),
  METRICS_SIGV4_REGION: () =>
    z
      .string()
      .regex(/^[a-z]{2}(-[a-z]+)+-\d$/, 'must be an AWS region')
      .optional(),
  METRICS_QUERY_TIMEOUT_MS: () => int(100, 60_000).default(10_000),
  METRICS_WRITE_TIMEOUT_MS: () => int(100, 10_000).default(2_000),

  // The cluster agent (functions/agent/main.ts; shared/agent/from-config.ts).
  // It publishes on proxima.{PROXIMA_CLIENT}.{PROXIMA_ENVIRONMENT}.{agent id}.kubernetes.
  PROXIMA_CLIENT: () => dnsLabel().optional(),
  PROXIMA_ENVIRONMENT: () => dnsLabel().optional(),
  /** The agent's UUID; unset: read from PROXIMA_AGENT_ID_FILE, generated there on first run. */
  PROXIMA_AGENT_ID: () =>
    z.string().regex(UUID_PATTERN, 'must be a UUID').optional(),
  /** Where a generated agent id is kept; default {DATA_DIR}/agent-id. */
  PROXIMA_AGENT_ID_FILE: () => z.string().optional(),
  /** The cluster's name in the inventory; default the kube-context's cluster name. */
  PROXIMA_CLUSTER_NAME: () => z.string().min(1).max(253).optional(),
  PROXIMA_K8S_SYNC_INTERVAL: () => duration(10_000).default(5 * 60_000),
  PROXIMA_K8S_EXCLUDE_NAMESPACES: () => csv().default([]),
  PROXIMA_K8S_POD_LIMIT: () => int(1, 1_000_000).default(5000),
  /** Items per page of each list (the apiserver's `limit`). */
  PROXIMA_K8S_PAGE_SIZE: () => int(1, 10_000).default(500),
  /** The agent's /healthz and /metrics; 0 picks a free port. */
  AGENT_HEALTH_PORT: () => int(0, 65535).default(8081),

  // Local stack.
  DATA_DIR: () => z.string().default('.data'),

  LOG_LEVEL: () => logLevel,
} satisfies Record<string, () => z.ZodType>;

type Variables = typeof VARIABLES;

/** The whole schema (every variable), as parseConfig checks it. */
export function configSchema() {
  const shape = {} as { [K in keyof Variables]: ReturnType<Variables[K]> };
  for (const name of Object.keys(VARIABLES) as (keyof Variables)[]) {
    (shape as Record<string, z.ZodType>)[name] = VARIABLES[name]();
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
