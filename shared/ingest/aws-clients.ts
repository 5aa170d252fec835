/**
 * The queue and claim-check clients as the configuration says: AWS's
 * endpoints by default, SQS_ENDPOINT / S3_ENDPOINT (path-style S3) for an
 * emulator.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../config.ts';

export function sqsFromConfig(config: Config): SQSClient {
  return new SQSClient({
    region: config.AWS_REGION,
    ...(config.SQS_ENDPOINT ? { endpoint: config.SQS_ENDPOINT } : {}),
  });
}

export function s3FromConfig(config: Config): S3Client {
  return new S3Client({
    region: config.AWS_REGION,
    ...(config.S3_ENDPOINT
      ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true }
      : {}),
  });
}
