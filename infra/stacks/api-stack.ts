/**
 * The HTTP API: a JWT authorizer on every route, and one function and one
 * route per entry of the route table (shared/http/routes.ts), built by
 * iterating it. Every API function logs in as the read-only database user
 * and holds nothing else, but for the live reads' functions, which also
 * read the bridge's NATS secret to ask cluster agents.
 */
import {
  CfnOutput,
  CfnParameter,
  Duration,
  RemovalPolicy,
  Stack,
  type StackProps,
} from 'aws-cdk-lib';
import { AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import { HttpJwtAuthorizer } from 'aws-cdk-lib/aws-apigatewayv2-authorizers';
import { HttpLambdaIntegration } from 'aws-cdk-lib/aws-apigatewayv2-integrations';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type { Construct } from 'constructs';
import {
  permissionsOf,
  type RouteDefinition,
  routes,
} from '../../shared/http/routes.ts';
import type { MetricsStoreRef } from '../constructs/metrics-store.ts';
import {
  type DatabaseLogin,
  ServiceFunction,
} from '../constructs/service-function.ts';
import { acknowledge } from '../nag.ts';
import { functionNames, routeId } from '../names.ts';
import type { DeployParameters } from '../parameters.ts';

/** HTTP API integrations time out at 30 s; the function stops first. */
const API_FUNCTION_TIMEOUT = Duration.seconds(25);

export interface ApiStackProps extends StackProps {
  readonly parameters: DeployParameters;
  readonly vpc: ec2.IVpc;
  readonly appSubnets: ec2.SubnetSelection;
  readonly reader: DatabaseLogin;
  /** The webhook receiver's login (the route table's `dbLogin`). */
  readonly webhooks: DatabaseLogin;
  /** The routes on metrics:read query it. */
  readonly metricsStore: MetricsStoreRef;
}

export class ApiStack extends Stack {
  readonly httpApi: apigw.HttpApi;
  readonly stage: apigw.HttpStage;
  /** Route name → its function. */
  readonly routeFunctions = new Map<string, ServiceFunction>();

  constructor(scope: Construct, id: string, props: ApiStackProps) {
    super(scope, id, props);
    const { parameters, vpc } = props;
    const names = functionNames(parameters.prefix);

    const issuer = new CfnParameter(this, 'JwtIssuer', {
      type: 'String',
      description:
        'Issuer (iss) of the bearer tokens, an https URL whose /.well-known/openid-configuration API Gateway reads',
      allowedPattern: '^https://\\S+$',
    });
    const audience = new CfnParameter(this, 'JwtAudience', {
      type: 'String',
      description: 'Audience (aud) the bearer tokens must carry',
      minLength: 1,
    });

    const authorizer = new HttpJwtAuthorizer('Jwt', issuer.valueAsString, {
      jwtAudience: [audience.valueAsString],
      identitySource: ['$request.header.Authorization'],
    });

    this.httpApi = new apigw.HttpApi(this, 'HttpApi', {
      apiName: `${parameters.prefix}-api`,
      description: 'Kubernetes inventory API',
      createDefaultStage: false,
      defaultAuthorizer: authorizer,
    });

    const accessLogs = new logs.LogGroup(this, 'AccessLogs', {
      retention: parameters.logRetentionDays as logs.RetentionDays,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    this.stage = new apigw.HttpStage(this, 'DefaultStage', {
      httpApi: this.httpApi,
      stageName: '$default',
      autoDeploy: true,
      // Per-route Latency, 4xx and 5xx for the dashboard.
      detailedMetricsEnabled: true,
      throttle: {
        rateLimit: parameters.apiThrottleRateLimit,
        burstLimit: parameters.apiThrottleBurstLimit,
      },
      accessLogSettings: {
        destination: new apigw.LogGroupLogDestination(accessLogs),
        // No query string: a parameter value could be a secret.
        format: AccessLogFormat.custom(
          JSON.stringify({
            requestId: '$context.requestId',
            ip: '$context.identity.sourceIp',
            requestTime: '$context.requestTime',
            routeKey: '$context.routeKey',
            status: '$context.status',
            responseLength: '$context.responseLength',
            responseLatency: '$context.responseLatency',
            integrationLatency: '$context.integrationLatency',
            integrationError: '$context.integrationErrorMessage',
            authorizerError: '$context.authorizer.error',
            sub: '$context.authorizer.claims.sub',
          }),
        ),
      },
    });

    const functionsSg = new ec2.SecurityGroup(this, 'ApiFunctionsSg', {
      vpc,
      description:
        'API functions: PostgreSQL through RDS Proxy; HTTPS, NATS and the metrics API out',
      allowAllOutbound: true,
    });

    const environment: Record<string, string> = {
      JWT_ISSUER: issuer.valueAsString,
      JWT_AUDIENCE: audience.valueAsString,
      // One connection: an instance serves one request at a time, and the
      // reads a request runs side by side (a list's page and its count)
      // would otherwise open a second connection on a cold start, a second
      // TLS handshake and login through the proxy, to save a round trip.
      DATABASE_POOL_MAX: '1',
    };

    // The operator's secret, the one the bridge reads (README, deploy).
    const natsSecret = secretsmanager.Secret.fromSecretNameV2(
      this,
      'NatsSecret',
      parameters.natsSecretName,
    );

    // Typed as any entry may be: the table's own types name only its routes.
    for (const route of routes as readonly RouteDefinition[]) {
      const id = routeId(route);
      const fn = new ServiceFunction(this, id, {
        entry: `functions/api/${route.name}.ts`,
        functionName: names.api(route),
        description: `${route.method} ${route.path}`,
        vpc,
        vpcSubnets: props.appSubnets,
        securityGroups: [functionsSg],
        timeout: API_FUNCTION_TIMEOUT,
        memorySize: 512,
        logLevel: parameters.logLevel,
        logRetention: parameters.logRetentionDays as logs.RetentionDays,
        environment,
      });
      // A route without a login (the OpenAPI document) gets no secret.
      if (route.dbLogin !== 'none') {
        fn.bindDatabase(
          route.dbLogin === 'webhooks' ? props.webhooks : props.reader,
        );
      }
      if (permissionsOf(route.access).includes('metrics:read')) {
        fn.bindMetricsReader(props.metricsStore);
      }
      if (route.liveReads) {
        fn.bindNatsSecret(natsSecret);
        acknowledge(
          fn,
          `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${parameters.natsSecretName}-??????]`,
          'The NATS secret is created by the operator, so only its name is known; the suffix Secrets Manager appends is the only wildcard.',
        );
      }
      this.routeFunctions.set(route.name, fn);

      const httpRoute = new apigw.HttpRoute(this, `${id}Route`, {
        httpApi: this.httpApi,
        routeKey: apigw.HttpRouteKey.with(
          route.path,
          apigw.HttpMethod[route.method],
        ),
        integration: new HttpLambdaIntegration(`${id}Integration`, fn),
        // A public entry (shared/http/routes.ts) takes no JWT; without an
        // explicit none it would inherit the API's default authorizer.
        authorizer:
          route.access.shape === 'public'
            ? new apigw.HttpNoneAuthorizer()
            : authorizer,
      });
      if (route.access.shape === 'public') {
        acknowledge(
          httpRoute,
          'AwsSolutions-APIG4',
          route.access.authenticatedBy === 'nothing'
            ? 'This route serves the public OpenAPI document of the API; it reads no tenant data.'
            : `This route takes no JWT: its handler authenticates the caller by the ${route.access.authenticatedBy}.`,
        );
      }
    }

    new CfnOutput(this, 'ApiUrl', {
      value: this.stage.url,
      description: 'Base URL of the inventory API',
    });
  }
}
