/**
 * The NATS → SQS bridge: a long-running Node process on ECS Fargate, one
 * task by default (the JetStream durable consumer keeps any extra task
 * from double-forwarding). Its NATS URL and credentials come from Secrets
 * Manager; the rest of its configuration is plain environment. It records
 * the messages it refuses in ingest_rejections, through the RDS Proxy, with
 * a login that may do nothing else; like the functions, it reads that
 * login's secret itself at start (DATABASE_SECRET_ARN).
 */
import { readFileSync } from 'node:fs';
import { Duration, IgnoreMode, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import { Platform } from 'aws-cdk-lib/aws-ecr-assets';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { acknowledge, WILDCARD_RESOURCE } from '../nag.ts';
import { fromRoot, repoRoot } from '../paths.ts';
import {
  type DatabaseLogin,
  METRICS_NAMESPACE,
  SERVICE_NAME,
} from './service-function.ts';

const DOCKERFILE = 'functions/bridge/Dockerfile';
export const BRIDGE_HEALTH_PORT = 8080;

/** The build context's allow-list, shared with Docker (BuildKit). */
function dockerIgnore(): string[] {
  return readFileSync(fromRoot(`${DOCKERFILE}.dockerignore`), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

export interface BridgeServiceProps {
  readonly vpc: ec2.IVpc;
  readonly subnets: ec2.SubnetSelection;
  readonly queue: sqs.IQueue;
  readonly queueMaxMessageBytes: number;
  readonly claimBucket: s3.IBucket;
  /** JSON secret with the keys `url` and `creds`. */
  readonly natsSecret: secretsmanager.ISecret;
  readonly natsStream: string;
  readonly natsConsumer: string;
  /** The login refused messages are recorded with (ingest_rejections). */
  readonly database: DatabaseLogin;
  readonly desiredCount: number;
  readonly logLevel: string;
  readonly logRetention: logs.RetentionDays;
}

export class BridgeService extends Construct {
  readonly cluster: ecs.Cluster;
  readonly service: ecs.FargateService;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: BridgeServiceProps) {
    super(scope, id);

    // Container Insights gives the RunningTaskCount the alarm watches.
    this.cluster = new ecs.Cluster(this, 'Cluster', {
      vpc: props.vpc,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
    });

    this.logGroup = new logs.LogGroup(this, 'Logs', {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const task = new ecs.FargateTaskDefinition(this, 'Task', {
      cpu: 512,
      // Several-MB inventories, gunzipped and held while being forwarded.
      memoryLimitMiB: 1024,
      runtimePlatform: {
        cpuArchitecture: ecs.CpuArchitecture.ARM64,
        operatingSystemFamily: ecs.OperatingSystemFamily.LINUX,
      },
    });

    task.addContainer('bridge', {
      image: ecs.ContainerImage.fromAsset(repoRoot, {
        file: DOCKERFILE,
        platform: Platform.LINUX_ARM64,
        ignoreMode: IgnoreMode.DOCKER,
        exclude: dockerIgnore(),
      }),
      essential: true,
      readonlyRootFilesystem: true,
      logging: ecs.LogDrivers.awsLogs({
        logGroup: this.logGroup,
        streamPrefix: 'bridge',
      }),
      environment: {
        AWS_REGION: props.queue.stack.region,
        QUEUE_URL: props.queue.queueUrl,
        QUEUE_MAX_MESSAGE_BYTES: String(props.queueMaxMessageBytes),
        CLAIM_BUCKET: props.claimBucket.bucketName,
        NATS_STREAM: props.natsStream,
        NATS_CONSUMER: props.natsConsumer,
        BRIDGE_HEALTH_PORT: String(BRIDGE_HEALTH_PORT),
        // The proxy's certificate chains to a public Amazon root, which
        // Node trusts as it is: no CA bundle needed for verify-full.
        DATABASE_SECRET_ARN: props.database.secret.secretArn,
        DATABASE_HOST: props.database.host,
        DATABASE_PORT: String(props.database.port),
        DATABASE_NAME: props.database.databaseName,
        // Refusals are rare: two connections are plenty.
        DATABASE_POOL_MAX: '2',
        LOG_LEVEL: props.logLevel,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
      },
      secrets: {
        // The whole secret ({url, creds, ca}), read by the rule the live
        // reads use (shared/nats-login.ts): a field named here that the
        // secret lacks (an optional `ca`) would stop the task from starting.
        NATS_SECRET: ecs.Secret.fromSecretsManager(props.natsSecret),
      },
      // node:22-slim has no curl; Node's fetch asks the bridge itself.
      healthCheck: {
        command: [
          'CMD',
          'node',
          '-e',
          `fetch('http://127.0.0.1:${BRIDGE_HEALTH_PORT}/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))`,
        ],
        interval: Duration.seconds(30),
        timeout: Duration.seconds(5),
        retries: 3,
        startPeriod: Duration.seconds(60),
      },
      // SIGTERM drains the NATS connection before the task stops.
      stopTimeout: Duration.seconds(30),
    });

    props.queue.grantSendMessages(task.taskRole);
    // Writes claim-checked bodies; never reads or deletes them.
    task.taskRole.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [props.claimBucket.arnForObjects('*')],
      }),
    );

    // Reads its database login's secret, and nothing else of the database.
    props.database.secret.grantRead(task.taskRole);

    const securityGroup = new ec2.SecurityGroup(this, 'Sg', {
      vpc: props.vpc,
      description: 'NATS bridge: no inbound; NATS, SQS, S3 and PostgreSQL out',
      allowAllOutbound: true,
    });
    // The proxy's inbound rule, kept in this stack as with the functions.
    for (const target of props.database.endpoint.connections.securityGroups) {
      target.addIngressRule(
        securityGroup,
        ec2.Port.tcp(props.database.port),
        'PostgreSQL through the RDS Proxy',
        true,
      );
    }

    this.service = new ecs.FargateService(this, 'Service', {
      cluster: this.cluster,
      taskDefinition: task,
      desiredCount: props.desiredCount,
      vpcSubnets: props.subnets,
      securityGroups: [securityGroup],
      assignPublicIp: false,
      // A second bridge during a deploy is harmless: the durable consumer
      // hands each message to one of them.
      minHealthyPercent: 100,
      maxHealthyPercent: 200,
      circuitBreaker: { enable: true, rollback: true },
      enableECSManagedTags: true,
      propagateTags: ecs.PropagatedTagSource.SERVICE,
    });

    acknowledge(
      task,
      'AwsSolutions-ECS2',
      'Only non-secret settings are plain environment variables; the NATS URL and credentials are injected from Secrets Manager, and the database login is read from Secrets Manager by the process (its ARN is not secret).',
    );
    acknowledge(
      task,
      WILDCARD_RESOURCE,
      'ecr:GetAuthorizationToken, granted to the execution role for the image pull, accepts no resource narrower than "*".',
    );
  }
}
