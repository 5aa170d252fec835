/**
 * The bridge as configured by the one config schema, for the ECS entry point
 * and the local stack alike (which passes its own clients and `onReject`).
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { SQSClient } from '@aws-sdk/client-sqs';
import { type Config, ConfigError } from '../config.ts';
import { getDb } from '../db/process-pool.ts';
import { natsTargetOf } from '../nats-login.ts';
import { s3FromConfig, sqsFromConfig } from './aws-clients.ts';
import { Bridge, type BridgeOptions } from './bridge/index.ts';
import { bridgeRejectionRecorder } from './rejections.ts';

export interface BridgeOverrides {
  sqs?: SQSClient;
  s3?: S3Client;
  onReject?: BridgeOptions['onReject'];
}

/** Builds the bridge; fails listing every variable it needs and lacks. */
export function createBridgeFromConfig(
  config: Config,
  overrides: BridgeOverrides = {},
): Bridge {
  const nats = natsTargetOf(config);
  const missing = [
    ...(nats ? [] : ['NATS_URL']),
    ...(['QUEUE_URL', 'CLAIM_BUCKET'] as const).filter((name) => !config[name]),
  ];
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid configuration:\n${missing.map((name) => `${name}: required by the bridge${name === 'NATS_URL' ? ' (or NATS_SECRET)' : ''}`).join('\n')}`,
    );
  }
  const sqs = overrides.sqs ?? sqsFromConfig(config);
  const s3 = overrides.s3 ?? s3FromConfig(config);
  // With a database configured, terminated messages are recorded in
  // ingest_rejections; without one they are logged and counted only.
  const hasDatabase = Boolean(
    config.DATABASE_URL ?? config.DATABASE_SECRET_ARN,
  );
  const onReject =
    overrides.onReject ??
    (hasDatabase
      ? bridgeRejectionRecorder(() =>
          getDb({
            applicationName: 'k8s-inventory-bridge',
            login: 'bridge',
            max: 1,
          }),
        )
      : undefined);
  return new Bridge({
    nats: nats!,
    stream: config.NATS_STREAM,
    consumer: config.NATS_CONSUMER,
    subjectFilter: config.NATS_SUBJECT_FILTER,
    createStream: config.NATS_CREATE_STREAM,
    sqs,
    s3,
    queueUrl: config.QUEUE_URL!,
    bucket: config.CLAIM_BUCKET!,
    maxBytes: config.QUEUE_MAX_MESSAGE_BYTES,
    healthPort: config.BRIDGE_HEALTH_PORT,
    ...(onReject ? { onReject } : {}),
  });
}
