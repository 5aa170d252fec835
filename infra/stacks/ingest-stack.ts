/**
 * Ingest: the bridge forwards each inventory from NATS into the SQS FIFO
 * queue (one message group per cluster, so one cluster's snapshots are
 * applied in order and one at a time), putting bodies over the queue's
 * limit into the claim bucket; the sync function applies them. A message
 * that keeps failing moves to the FIFO dead-letter queue. Both record the
 * messages they refuse in ingest_rejections, each with its own login.
 */
import {
  CfnOutput,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
} from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { BridgeService } from '../constructs/bridge-service.ts';
import type { MetricsStoreRef } from '../constructs/metrics-store.ts';
import {
  type DatabaseLogin,
  ServiceFunction,
} from '../constructs/service-function.ts';
import { SYNC_MEMORY_SIZE } from '../function-memory.ts';
import { acknowledge } from '../nag.ts';
import { functionNames } from '../names.ts';
import {
  type DeployParameters,
  SYNC_TRANSACTION_BOUND_SECONDS,
} from '../parameters.ts';

/** SQS's own advice for a Lambda source: visibility ≥ 6 × its timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface IngestStackProps extends StackProps {
  readonly parameters: DeployParameters;
  readonly vpc: ec2.IVpc;
  readonly appSubnets: ec2.SubnetSelection;
  readonly writer: DatabaseLogin;
  /** The bridge's own login: it may only insert into ingest_rejections. */
  readonly bridgeLogin: DatabaseLogin;
  /** The sync remote-writes each cluster's series there. */
  readonly metricsStore: MetricsStoreRef;
}

export class IngestStack extends Stack {
  readonly queue: sqs.Queue;
  readonly deadLetterQueue: sqs.Queue;
  readonly claimBucket: s3.Bucket;
  readonly syncFunction: ServiceFunction;
  readonly bridge: BridgeService;

  constructor(scope: Construct, id: string, props: IngestStackProps) {
    super(scope, id, props);
    const { parameters, vpc } = props;
    const syncTimeout = Duration.seconds(parameters.syncTimeoutSeconds);

    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      queueName: `${parameters.prefix}-dlq.fifo`,
      fifo: true,
      maxMessageSizeBytes: parameters.queueMaxMessageBytes,
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    acknowledge(
      this.deadLetterQueue,
      'AwsSolutions-SQS3',
      'This is the dead-letter queue of the inventory queue; it keeps failed messages 14 days for inspection and redrive.',
    );

    this.queue = new sqs.Queue(this, 'InventoryQueue', {
      queueName: `${parameters.prefix}.fifo`,
      fifo: true,
      // The bridge sets a deduplication id; the body hash is the fallback.
      contentBasedDeduplication: true,
      deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
      fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
      maxMessageSizeBytes: parameters.queueMaxMessageBytes,
      visibilityTimeout: Duration.seconds(
        VISIBILITY_TIMEOUT_FACTOR * parameters.syncTimeoutSeconds,
      ),
      // Nothing is dropped silently: a snapshot outlives any backlog.
      retentionPeriod: Duration.days(14),
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: {
        queue: this.deadLetterQueue,
        maxReceiveCount: parameters.queueMaxReceiveCount,
      },
    });

    this.claimBucket = new s3.Bucket(this, 'ClaimBucket', {
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      lifecycleRules: [
        {
          id: 'expire-claims',
          expiration: Duration.days(1),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      // Claims expire within a day; a destroyed stack leaves an emptying bucket.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    acknowledge(
      this.claimBucket,
      'AwsSolutions-S1',
      'Claim-check objects live one day and are written by the bridge role and read by the sync role only; CloudTrail data events cover auditing without a second bucket of access logs.',
    );

    const natsSecret = secretsmanager.Secret.fromSecretNameV2(
      this,
      'NatsSecret',
      parameters.natsSecretName,
    );
    this.bridge = new BridgeService(this, 'Bridge', {
      vpc,
      subnets: props.appSubnets,
      queue: this.queue,
      queueMaxMessageBytes: parameters.queueMaxMessageBytes,
      claimBucket: this.claimBucket,
      natsSecret,
      natsStream: parameters.natsStream,
      natsConsumer: parameters.natsConsumer,
      database: props.bridgeLogin,
      desiredCount: parameters.bridgeDesiredCount,
      logLevel: parameters.logLevel,
      logRetention: parameters.logRetentionDays as logs.RetentionDays,
    });
    acknowledge(
      this.bridge,
      `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.claimBucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
      'Claim-check object keys are made per message; the statement allows s3:PutObject only.',
    );
    acknowledge(
      this.bridge,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${parameters.natsSecretName}-??????]`,
      'The NATS secret is created by the operator, so only its name is known; the suffix Secrets Manager appends is the only wildcard.',
    );

    const syncSg = new ec2.SecurityGroup(this, 'SyncSg', {
      vpc,
      description: 'Sync function: PostgreSQL through RDS Proxy, HTTPS out',
      allowAllOutbound: true,
    });

    this.syncFunction = new ServiceFunction(this, 'Sync', {
      entry: 'functions/sync/handler.ts',
      functionName: functionNames(parameters.prefix).sync,
      description: 'Applies inventory snapshots from the queue',
      vpc,
      vpcSubnets: props.appSubnets,
      securityGroups: [syncSg],
      timeout: syncTimeout,
      memorySize: SYNC_MEMORY_SIZE,
      logLevel: parameters.logLevel,
      logRetention: parameters.logRetentionDays as logs.RetentionDays,
      environment: {
        SYNC_TIMEOUT_MS: String(SYNC_TRANSACTION_BOUND_SECONDS * 1000),
        QUEUE_MAX_RECEIVE_COUNT: String(parameters.queueMaxReceiveCount),
        // Events older than this are not stored in the first place.
        EVENT_RETENTION_HOURS: String(parameters.eventRetentionHours),
        EVENT_HISTORY_DAYS: String(parameters.eventHistoryDays),
      },
    })
      .bindDatabase(props.writer)
      .bindMetricsWriter(props.metricsStore)
      .bindQueue(this.queue, {
        batchSize: parameters.syncBatchSize,
        maxConcurrency: parameters.syncMaxConcurrency,
      })
      .bindClaimBucketReader(this.claimBucket);
    const outputs: Record<string, [string, string]> = {
      QueueUrl: [this.queue.queueUrl, 'The inventory queue'],
      DeadLetterQueueUrl: [
        this.deadLetterQueue.queueUrl,
        'Messages that failed every delivery',
      ],
      ClaimBucketName: [this.claimBucket.bucketName, 'Claim-checked bodies'],
      BridgeClusterName: [this.bridge.cluster.clusterName, 'ECS cluster'],
      BridgeServiceName: [this.bridge.service.serviceName, 'ECS service'],
    };
    for (const [name, [value, description]] of Object.entries(outputs)) {
      new CfnOutput(this, name, { value, description });
    }

    acknowledge(
      this.syncFunction,
      `AwsSolutions-IAM5[Resource::<${this.getLogicalId(this.claimBucket.node.defaultChild as s3.CfnBucket)}.Arn>/*]`,
      'Claim-check object keys are made per message; the statement allows s3:GetObject only.',
    );
  }
}
