/**
 * The one function construct: a NodejsFunction with our defaults (Node 22,
 * ARM64, CommonJS bundle with source maps built by the local esbuild, X-Ray
 * tracing, an owned log group with retention, the Powertools environment)
 * and `bind*` helpers that set an environment variable and grant the access
 * behind it together, so a function never holds a permission it has no
 * variable for, or the reverse.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import {
  acknowledge,
  LAMBDA_BASIC_EXECUTION,
  LAMBDA_VPC_ACCESS,
  WILDCARD_RESOURCE,
} from '../nag.ts';
import { fromRoot, repoRoot } from '../paths.ts';
import type { MetricsStoreRef } from './metrics-store.ts';

/** Service name and metrics namespace, as shared/observability spells them. */
export const SERVICE_NAME = 'k8s-inventory';
export const METRICS_NAMESPACE = 'K8sInventory';

/** One database login: its secret and the endpoint it connects through. */
export interface DatabaseLogin {
  /** Username and password of this login (JSON, as RDS writes it). */
  readonly secret: secretsmanager.ISecret;
  /** The RDS Proxy: network access is granted to it. */
  readonly endpoint: ec2.IConnectable;
  readonly host: string;
  readonly port: number;
  readonly databaseName: string;
}

export interface ServiceFunctionProps {
  /** Entry file, relative to the repository root: `functions/...ts`. */
  readonly entry: string;
  /** Physical name; the dashboard finds the function by it. */
  readonly functionName: string;
  readonly description: string;
  readonly vpc: ec2.IVpc;
  readonly vpcSubnets: ec2.SubnetSelection;
  readonly securityGroups: ec2.ISecurityGroup[];
  readonly logLevel: string;
  readonly logRetention: logs.RetentionDays;
  /** @default 15 seconds */
  readonly timeout?: Duration;
  /** @default 512 */
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
  /** Extra files for the bundle, copied after esbuild ran. */
  readonly commandHooks?: nodejs.ICommandHooks;
  /**
   * Read secrets with the SDK rather than through the Parameters and
   * Secrets extension (migrate: it runs once per deploy, where its cold
   * start does not matter, and reads every login's secret).
   * @default false
   */
  readonly secretsThroughSdk?: boolean;
}

/**
 * The AWS Parameters and Secrets Lambda Extension: the function reads its
 * secrets from it over localhost (shared/secret-value.ts) instead of loading
 * the SDK's Secrets Manager client at cold start. The layer's ARN comes from
 * CDK's region table (a template mapping when the region is not known at
 * synth). Only warnings logged; secrets are read once per cold start, so the
 * extension's cache matters little.
 */
const SECRETS_EXTENSION = lambda.ParamsAndSecretsLayerVersion.fromVersion(
  lambda.ParamsAndSecretsVersions.V1_0_103,
  { logLevel: lambda.ParamsAndSecretsLogLevel.WARN },
);

/**
 * How every function is bundled (esbuild's own option names where they
 * differ); the cold-start bench builds its floor bundle with the same.
 *
 * CommonJS, not ESM, for the cold start: an ESM bundle hoists every import
 * of a package left out (the SDK) and every builtin to the top, so all are
 * loaded before the handler runs, and `import ... from 'node:http'`
 * evaluates the builtin's lazy getters (undici: ~70 ms on Node 22). In a
 * CommonJS bundle a module reached only by `import()` stays a lazy
 * `require` until it is called, and builtins are plain `require`s.
 * (docs/decisions.md, "Lambda bundles are CommonJS".)
 */
export const BUNDLE = {
  format: 'cjs',
  /** The entry file in the asset; Lambda loads `index.js` as CommonJS. */
  file: 'index.js',
  target: 'node22',
  mainFields: ['module', 'main'],
  // The runtime ships the v3 SDK; pg's optional native binding is never
  // installed.
  external: ['@aws-sdk/*', 'pg-native'],
} as const;

/**
 * Modules a bundle takes from the project instead: tweetnacl, which the
 * NATS client's `.creds` login calls for one Ed25519 signature, is
 * node:crypto's signing behind tweetnacl's API (shared/live/nacl-signing.ts:
 * the pure-JavaScript arithmetic was ~60 ms of a live read's cold start);
 * node:stream/web, which @middy/core imports for streamed responses, is
 * loaded only when read (shared/lazy-stream-web.cjs: ~2.5 ms of every cold
 * start).
 */
export const BUNDLE_ALIAS = {
  tweetnacl: fromRoot('shared/live/nacl-signing.ts'),
  'node:stream/web': fromRoot('shared/lazy-stream-web.cjs'),
} as const;
const BUNDLE_ALIASES = Object.entries(BUNDLE_ALIAS).map(
  ([from, to]) => `${from}=${to}`,
);

export class ServiceFunction extends nodejs.NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const logGroup = new logs.LogGroup(scope, `${id}LogGroup`, {
      retention: props.logRetention,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    super(scope, id, {
      entry: fromRoot(props.entry),
      projectRoot: repoRoot,
      depsLockFilePath: fromRoot('package-lock.json'),
      functionName: props.functionName,
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize ?? 512,
      timeout: props.timeout ?? Duration.seconds(15),
      tracing: lambda.Tracing.ACTIVE,
      logGroup,
      ...(props.secretsThroughSdk
        ? {}
        : { paramsAndSecrets: SECRETS_EXTENSION }),
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: props.securityGroups,
      environment: {
        // No --enable-source-maps: with it Node reads and parses the
        // bundle's source map as the bundle loads, ~30 ms of every cold
        // start. index.js.map ships beside the bundle; set NODE_OPTIONS=
        // --enable-source-maps on a function while debugging it.
        LOG_LEVEL: props.logLevel,
        POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
        POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
        POWERTOOLS_LOG_LEVEL: props.logLevel,
        // Responses can be whole inventories; errors are still captured.
        POWERTOOLS_TRACER_CAPTURE_RESPONSE: 'false',
        ...props.environment,
      },
      bundling: {
        format: nodejs.OutputFormat.CJS,
        target: BUNDLE.target,
        mainFields: [...BUNDLE.mainFields],
        minify: true,
        sourceMap: true,
        sourcesContent: false,
        externalModules: [...BUNDLE.external],
        esbuildArgs: { '--alias': BUNDLE_ALIASES },
        commandHooks: props.commandHooks,
      },
    });

    acknowledge(
      this,
      LAMBDA_BASIC_EXECUTION,
      'The AWS managed basic execution policy only lets the function write its own logs.',
    );
    acknowledge(
      this,
      LAMBDA_VPC_ACCESS,
      'The AWS managed VPC access policy is what Lambda needs to attach its network interfaces in our private subnets.',
    );
    acknowledge(
      this,
      'AwsSolutions-L1',
      'nodejs22.x is the runtime the project targets (design decision: the code runs on Node 20 and 22, its dependencies are pinned for them); moving to a newer runtime is a deliberate upgrade, not a default.',
    );
    acknowledge(
      this,
      WILDCARD_RESOURCE,
      'X-Ray PutTraceSegments/PutTelemetryRecords accept no resource narrower than "*".',
    );
  }

  /**
   * Connects through the RDS Proxy as one database login: the variables the
   * pool reads, read access to that login's secret, and the network path.
   */
  bindDatabase(login: DatabaseLogin): this {
    this.addEnvironment('DATABASE_SECRET_ARN', login.secret.secretArn);
    this.addEnvironment('DATABASE_HOST', login.host);
    this.addEnvironment('DATABASE_PORT', String(login.port));
    this.addEnvironment('DATABASE_NAME', login.databaseName);
    // The runtime's CA bundle, with the RDS certificate authorities, so the
    // pool can verify the server (sslmode=verify-full).
    this.addEnvironment('NODE_EXTRA_CA_CERTS', '/var/runtime/ca-cert.pem');
    // Read with the SDK or through the extension, which calls
    // GetSecretValue with the function's role.
    login.secret.grantRead(this);
    // Only the proxy's inbound rule is needed: function security groups
    // allow all outbound. As a "remote" rule it lives in this function's
    // stack, so the database stack never depends on its callers.
    for (const target of login.endpoint.connections.securityGroups) {
      for (const source of this.connections.securityGroups) {
        target.addIngressRule(
          source,
          ec2.Port.tcp(login.port),
          'PostgreSQL through the RDS Proxy',
          true,
        );
      }
    }
    return this;
  }

  /**
   * Consumes a FIFO queue: records in order per message group, a partial
   * batch response, and a cap on concurrent invocations so the queue cannot
   * exhaust the database's connections.
   */
  bindQueue(
    queue: sqs.IQueue,
    options: { batchSize: number; maxConcurrency: number },
  ): this {
    this.addEventSource(
      new SqsEventSource(queue, {
        batchSize: options.batchSize,
        maxConcurrency: options.maxConcurrency,
        reportBatchItemFailures: true,
      }),
    );
    return this;
  }

  /**
   * Asks cluster agents over NATS (live reads): the NATS secret's id and
   * read access to it; the process reads it at cold start. The function's
   * security group already allows all outbound, NATS included.
   */
  bindNatsSecret(secret: secretsmanager.ISecret): this {
    this.addEnvironment('NATS_SECRET_ID', secret.secretName);
    secret.grantRead(this);
    return this;
  }

  /** Reads claim-checked bodies: s3:GetObject on the bucket's objects only. */
  bindClaimBucketReader(bucket: s3.IBucket): this {
    this.addEnvironment('CLAIM_BUCKET', bucket.bucketName);
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [bucket.arnForObjects('*')],
      }),
    );
    bucket.encryptionKey?.grantDecrypt(this);
    return this;
  }

  /** Queries the cluster metrics store: METRICS_URL, aps:QueryMetrics. */
  bindMetricsReader(store: MetricsStoreRef): this {
    this.addEnvironment('METRICS_URL', store.queryUrl);
    return this.bindMetricsSigning(store, 'aps:QueryMetrics');
  }

  /** Writes the cluster series: METRICS_WRITE_URL, aps:RemoteWrite. */
  bindMetricsWriter(store: MetricsStoreRef): this {
    this.addEnvironment('METRICS_WRITE_URL', store.writeUrl);
    return this.bindMetricsSigning(store, 'aps:RemoteWrite');
  }

  private bindMetricsSigning(store: MetricsStoreRef, action: string): this {
    if (store.sigv4Region === undefined || store.workspaceArn === undefined) {
      return this;
    }
    this.addEnvironment('METRICS_SIGV4_REGION', store.sigv4Region);
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [action],
        resources: [store.workspaceArn],
      }),
    );
    return this;
  }
}
