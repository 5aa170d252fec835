/**
 * Deploy parameters that shape resources, read from CDK context (`cdk.json`
 * or `-c key=value`) and checked at once, so a typo fails the synth listing
 * every bad value. The JWT issuer and audience are CloudFormation parameters
 * of the API stack instead (see api-stack.ts): a synth needs no value for
 * them, and a deploy cannot go out without one.
 */

import type { Node } from 'constructs';
import * as z from 'zod';
import {
  DEFAULT_EVENT_HISTORY_DAYS,
  DEFAULT_EVENT_RETENTION_HOURS,
  DEFAULT_STALE_CLUSTER_MINUTES,
} from '../shared/config.ts';

/** The transaction bound the sync handler enforces (spec: 60 s). */
export const SYNC_TRANSACTION_BOUND_SECONDS = 60;

const bool = z.preprocess(
  (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
  z.union([
    z.boolean(),
    z.enum(['true', 'false']).transform((v) => v === 'true'),
  ]),
);
const int = (min: number, max: number) =>
  z.coerce.number().int().min(min).max(max);

/** The retention periods CloudWatch Logs accepts, in days. */
const LOG_RETENTION_DAYS = [
  1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827,
  2192, 2557, 2922, 3288, 3653,
];

export const parametersSchema = z.object({
  /** Prefix of stack and function names; one deployment per prefix. */
  prefix: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,23}$/)
    .default('k8s-inventory'),

  // Network (two AZs: the stacks are environment-agnostic, so synth needs
  // no account lookups).
  /** NAT gateways for egress to NATS and the metrics API (0 = none). */
  natGateways: int(0, 3).default(1),

  // Database.
  /** Instance class without the `db.` prefix. */
  databaseInstanceType: z
    .string()
    .regex(/^[a-z0-9-]+\.[a-z0-9]+$/)
    .default('t4g.medium'),
  databaseMultiAz: bool.default(true),
  databaseAllocatedStorageGiB: int(20, 65536).default(50),
  databaseMaxAllocatedStorageGiB: int(20, 65536).default(200),
  databaseBackupRetentionDays: int(1, 35).default(14),
  /** Deletion protection on the instance and termination protection on its stack. */
  deletionProtection: bool.default(true),

  // Ingest.
  /** The queue's MaximumMessageSize; bigger bodies go to the claim bucket. */
  queueMaxMessageBytes: int(256 * 1024, 1024 * 1024).default(1024 * 1024),
  /** Receives before a message moves to the dead-letter queue. */
  queueMaxReceiveCount: int(1, 100).default(5),
  syncBatchSize: int(1, 5).default(5),
  /** Sync invocations at once: each holds one database connection. */
  syncMaxConcurrency: int(2, 1000).default(5),
  /** The sync function's timeout; must exceed the 60 s transaction bound. */
  syncTimeoutSeconds: int(SYNC_TRANSACTION_BOUND_SECONDS + 1, 900).default(90),
  bridgeDesiredCount: int(0, 10).default(1),
  /**
   * Secrets Manager secret holding the bridge's NATS connection, created by
   * the operator before the first deploy: JSON `{"url": "...", "creds": "..."}`.
   */
  natsSecretName: z.string().min(1).default('k8s-inventory/nats'),
  natsStream: z.string().min(1).default('EVENTS'),
  natsConsumer: z.string().min(1).default('k8s-inventory-bridge'),

  // Sweeps.
  staleClusterMinutes: int(1, 10_080).default(DEFAULT_STALE_CLUSTER_MINUTES),
  eventRetentionHours: int(1, 8_760).default(DEFAULT_EVENT_RETENTION_HOURS),
  eventHistoryDays: int(1, 366).default(DEFAULT_EVENT_HISTORY_DAYS),

  // API.
  /**
   * A Prometheus-compatible store of your own for the cluster metrics: its
   * query API base (no SigV4). Unset: Amazon Managed Service for Prometheus.
   */
  metricsUrl: z.string().url().optional(),
  /** With metricsUrl: where the sync remote-writes (default <metricsUrl>/api/v1/write). */
  metricsWriteUrl: z.string().url().optional(),
  /** An existing AMP workspace to use instead of creating one. */
  metricsWorkspaceId: z
    .string()
    .regex(/^ws-[0-9a-zA-Z-]{1,60}$/, 'must be an AMP workspace id (ws-...)')
    .optional(),
  apiThrottleRateLimit: int(1, 10_000).default(50),
  apiThrottleBurstLimit: int(1, 5_000).default(100),

  // Operations.
  logLevel: z.enum(['DEBUG', 'INFO', 'WARN', 'ERROR']).default('INFO'),
  logRetentionDays: int(1, 3653)
    .refine((days) => LOG_RETENTION_DAYS.includes(days), {
      message: `must be one of ${LOG_RETENTION_DAYS.join(', ')}`,
    })
    .default(30),
  /** Subscribed to the alarm topic when given. */
  alarmEmail: z.string().email().optional(),
});

export type DeployParameters = z.infer<typeof parametersSchema>;

export class ParametersError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ParametersError';
  }
}

/** Parses a record of context values; lists every bad one in one error. */
export function parseParameters(
  values: Record<string, unknown>,
): DeployParameters {
  const result = parametersSchema.safeParse(values);
  if (!result.success) {
    const lines = result.error.issues.map(
      (issue) => `${issue.path.join('.')}: ${issue.message}`,
    );
    throw new ParametersError(
      `invalid deploy parameters:\n${lines.join('\n')}`,
    );
  }
  const parameters = result.data;
  if (
    parameters.databaseMaxAllocatedStorageGiB <
    parameters.databaseAllocatedStorageGiB
  ) {
    throw new ParametersError(
      'invalid deploy parameters:\ndatabaseMaxAllocatedStorageGiB: must be at least databaseAllocatedStorageGiB',
    );
  }
  return parameters;
}

/** Reads every parameter the schema knows from the app's context. */
export function parametersFromContext(node: Node): DeployParameters {
  const values: Record<string, unknown> = {};
  for (const key of Object.keys(parametersSchema.shape)) {
    const value = node.tryGetContext(key);
    if (value !== undefined) values[key] = value;
  }
  return parseParameters(values);
}
