/**
 * One CloudWatch dashboard and the alarms, sent to one SNS topic. The
 * service's own metrics are EMF metrics in the `K8sInventory` namespace
 * under the spec's Prometheus names (shared/observability/metrics.ts); the
 * dashboard finds them by name with SEARCH, so a dimension a handler adds
 * (such as `result` on the linkage counter) shows as its own line instead of
 * hiding the metric.
 */
import { Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cw from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as ecs from 'aws-cdk-lib/aws-ecs';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as rds from 'aws-cdk-lib/aws-rds';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { routes } from '../../shared/http/routes.ts';
import { MetricName } from '../../shared/observability/metrics.ts';
import { METRICS_NAMESPACE } from '../constructs/service-function.ts';
import { functionNames } from '../names.ts';
import type { DeployParameters } from '../parameters.ts';

/** Oldest message age that pages: snapshots arrive every minute. */
export const OLDEST_MESSAGE_ALARM_SECONDS = 10 * 60;
/** API 5xx share of requests, in percent, that pages. */
export const API_5XX_ALARM_PERCENT = 5;
/** Below this many requests in the window the 5xx share is not judged. */
const API_5XX_MIN_REQUESTS = 20;

const ONE_MINUTE = Duration.minutes(1);
const FIVE_MINUTES = Duration.minutes(5);

export interface MonitoringStackProps extends StackProps {
  readonly parameters: DeployParameters;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly bridgeService: ecs.FargateService;
  readonly httpApi: apigw.IHttpApi;
  readonly stageName: string;
  readonly database: rds.DatabaseInstance;
  readonly proxy: rds.DatabaseProxy;
}

export class MonitoringStack extends Stack {
  readonly topic: sns.Topic;
  readonly dashboard: cw.Dashboard;
  readonly alarms: cw.Alarm[] = [];

  constructor(scope: Construct, id: string, props: MonitoringStackProps) {
    super(scope, id, props);
    const { parameters } = props;
    const names = functionNames(parameters.prefix);

    // CloudWatch can publish only to a topic whose key lets it encrypt;
    // the AWS managed SNS key does not.
    const key = new kms.Key(this, 'AlarmTopicKey', {
      description: 'Encrypts the k8s-inventory alarm topic',
      enableKeyRotation: true,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        principals: [new iam.ServicePrincipal('cloudwatch.amazonaws.com')],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );
    this.topic = new sns.Topic(this, 'AlarmTopic', {
      topicName: `${parameters.prefix}-alarms`,
      displayName: 'k8s-inventory alarms',
      masterKey: key,
      enforceSSL: true,
    });
    if (parameters.alarmEmail) {
      this.topic.addSubscription(
        new subscriptions.EmailSubscription(parameters.alarmEmail),
      );
    }

    // --- Alarms -----------------------------------------------------------

    const dlqDepth =
      props.deadLetterQueue.metricApproximateNumberOfMessagesVisible({
        period: ONE_MINUTE,
        statistic: cw.Stats.MAXIMUM,
      });
    this.alarm('DeadLetterQueueNotEmpty', {
      metric: dlqDepth,
      threshold: 1,
      comparisonOperator:
        cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'An inventory message failed every delivery and sits in the dead-letter queue. See "Dead-letter queue not empty" in the README operate section.',
    });

    const oldestAge = props.queue.metricApproximateAgeOfOldestMessage({
      period: ONE_MINUTE,
      statistic: cw.Stats.MAXIMUM,
    });
    this.alarm('OldestMessageTooOld', {
      metric: oldestAge,
      threshold: OLDEST_MESSAGE_ALARM_SECONDS,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'The oldest inventory message waited over 10 minutes: sync is failing, throttled or blocked. See "Oldest message older than 10 minutes" in the README operate section.',
    });

    const syncErrors = lambdaMetric(
      names.sync,
      'Errors',
      cw.Stats.SUM,
      FIVE_MINUTES,
    );
    this.alarm('SyncErrors', {
      metric: syncErrors,
      threshold: 1,
      comparisonOperator:
        cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        'The sync function failed a whole invocation (crash, timeout or configuration). See "Sync errors" in the README operate section.',
    });

    // A sweep that fails does so on every run until someone looks (a
    // missing grant, a migration not applied): nothing else would tell,
    // since the API keeps answering. Each failed invocation counts, the
    // scheduler's retries too.
    for (const [id, functionName, what] of [
      ['StaleSweepErrors', names.staleClusters, 'stale-cluster'],
      ['RetentionSweepErrors', names.eventRetention, 'retention'],
    ] as const) {
      this.alarm(id, {
        metric: lambdaMetric(
          functionName,
          'Errors',
          cw.Stats.SUM,
          FIVE_MINUTES,
        ),
        threshold: 1,
        comparisonOperator:
          cw.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: 1,
        treatMissingData: cw.TreatMissingData.NOT_BREACHING,
        alarmDescription: `The ${what} sweep (${functionName}) failed. See "Sweep errors" in the README operate section.`,
      });
    }

    const apiStageDimensions = {
      ApiId: props.httpApi.apiId,
      Stage: props.stageName,
    };
    const api5xxRate = new cw.MathExpression({
      label: 'API 5xx %',
      expression: `IF(requests >= ${API_5XX_MIN_REQUESTS}, 100 * errors / requests, 0)`,
      usingMetrics: {
        requests: apiMetric('Count', apiStageDimensions, cw.Stats.SUM),
        errors: apiMetric('5xx', apiStageDimensions, cw.Stats.SUM),
      },
      period: FIVE_MINUTES,
    });
    this.alarm('Api5xxRate', {
      metric: api5xxRate,
      threshold: API_5XX_ALARM_PERCENT,
      comparisonOperator: cw.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cw.TreatMissingData.NOT_BREACHING,
      alarmDescription: `Over ${API_5XX_ALARM_PERCENT}% of API requests failed with 5xx in 5 minutes. See "API 5xx rate" in the README operate section.`,
    });

    const bridgeDimensions = {
      ClusterName: props.bridgeService.cluster.clusterName,
      ServiceName: props.bridgeService.serviceName,
    };
    const bridgeRunning = new cw.Metric({
      namespace: 'ECS/ContainerInsights',
      metricName: 'RunningTaskCount',
      dimensionsMap: bridgeDimensions,
      statistic: cw.Stats.MINIMUM,
      period: ONE_MINUTE,
      label: 'bridge tasks running',
    });
    if (parameters.bridgeDesiredCount > 0) {
      this.alarm('BridgeNotRunning', {
        metric: bridgeRunning,
        threshold: parameters.bridgeDesiredCount,
        comparisonOperator: cw.ComparisonOperator.LESS_THAN_THRESHOLD,
        // A deploy replaces the task within a few minutes.
        evaluationPeriods: 5,
        datapointsToAlarm: 5,
        treatMissingData: cw.TreatMissingData.BREACHING,
        alarmDescription:
          'Fewer bridge tasks run than desired: nothing moves from NATS to the queue. See "Bridge task not running" in the README operate section.',
      });
    }

    // --- Dashboard ----------------------------------------------------------

    const allFunctions = [
      names.sync,
      names.staleClusters,
      names.eventRetention,
      names.migrate,
      names.admin,
      ...routes.map((route) => names.api(route)),
    ];

    this.dashboard = new cw.Dashboard(this, 'Dashboard', {
      dashboardName: `${parameters.prefix}`,
      defaultInterval: Duration.hours(6),
    });
    this.dashboard.addWidgets(
      new cw.AlarmStatusWidget({
        title: 'Alarms',
        alarms: this.alarms,
        width: 24,
        height: 3,
      }),
    );

    this.dashboard.addWidgets(header('Sync'));
    this.dashboard.addWidgets(
      graph('Syncs', [
        emf(MetricName.clustersSynced, 'Sum', 'syncs'),
        emf(MetricName.snapshotsSkipped, 'Sum', 'skipped (not newer)'),
        emf(MetricName.specFactsNotNewer, 'Sum', 'spec facts not newer'),
      ]),
      new cw.GraphWidget({
        title: 'Sync duration',
        left: [
          emf(MetricName.syncDuration, 'p50', 'p50 (s)'),
          emf(MetricName.syncDuration, 'p99', 'p99 (s)'),
        ],
        right: [
          lambdaMetric(
            names.sync,
            'Duration',
            cw.Stats.p(99),
            ONE_MINUTE,
            'invocation p99 (ms)',
          ),
        ],
        width: 6,
        height: 6,
      }),
      graph('Rows synced', [
        emf(MetricName.nodesSynced, 'Sum', 'nodes'),
        emf(MetricName.workloadsSynced, 'Sum', 'workloads'),
        emf(MetricName.changeRecordsWritten, 'Sum', 'change records'),
      ]),
      graph('Node–host linkage', [
        emf(MetricName.nodeHostLinkage, 'Sum', 'linkage'),
      ]),
      graph('Cluster series written after sync', [
        emf(MetricName.metricsSeriesWritten, 'Sum', 'series written'),
        emf(MetricName.metricsWriteFailures, 'Sum', 'write failures'),
      ]),
    );

    this.dashboard.addWidgets(header('Queue and rejections'));
    this.dashboard.addWidgets(
      graph('Queue depth', [
        props.queue.metricApproximateNumberOfMessagesVisible({
          period: ONE_MINUTE,
          statistic: cw.Stats.MAXIMUM,
          label: 'waiting',
        }),
        props.queue.metricApproximateNumberOfMessagesNotVisible({
          period: ONE_MINUTE,
          statistic: cw.Stats.MAXIMUM,
          label: 'in flight',
        }),
      ]),
      new cw.GraphWidget({
        title: 'Oldest message age (s)',
        left: [oldestAge.with({ label: 'oldest message' })],
        leftAnnotations: [
          { value: OLDEST_MESSAGE_ALARM_SECONDS, label: 'alarm' },
        ],
        width: 6,
        height: 6,
      }),
      graph('Dead-letter queue depth', [dlqDepth.with({ label: 'messages' })]),
      graph('Rejections', [
        emf(MetricName.ingestRejections, 'Sum', 'sync rejected'),
        emf(MetricName.bridgeRejected, 'Sum', 'bridge rejected'),
        emf(MetricName.duplicateRows, 'Sum', 'duplicate keys in a snapshot'),
      ]),
    );

    this.dashboard.addWidgets(header('Bridge'));
    this.dashboard.addWidgets(
      graph('Bridge forwarding', [
        emf(MetricName.bridgeForwarded, 'Sum', 'forwarded'),
        emf(MetricName.bridgeClaimChecked, 'Sum', 'claim-checked'),
        emf(MetricName.bridgeSendFailures, 'Sum', 'send failures'),
      ]),
      graph('Bridge consumer lag (messages)', [
        emf(MetricName.bridgeConsumerLag, 'Maximum', 'pending in JetStream'),
      ]),
      graph('Bridge tasks', [bridgeRunning]),
      graph('Bridge CPU and memory (%)', [
        props.bridgeService.metricCpuUtilization({ period: ONE_MINUTE }),
        props.bridgeService.metricMemoryUtilization({ period: ONE_MINUTE }),
      ]),
    );

    this.dashboard.addWidgets(header('API'));
    const perRoute = (
      metricName: string,
      statistic: string,
      period: Duration,
    ) =>
      routes.map((route) =>
        apiMetric(
          metricName,
          {
            ...apiStageDimensions,
            Method: route.method,
            Resource: route.path,
          },
          statistic,
          period,
          route.name,
        ),
      );
    this.dashboard.addWidgets(
      graph(
        'API latency p50 / p99 (ms)',
        [
          apiMetric(
            'Latency',
            apiStageDimensions,
            cw.Stats.p(50),
            FIVE_MINUTES,
            'p50',
          ),
          apiMetric(
            'Latency',
            apiStageDimensions,
            cw.Stats.p(99),
            FIVE_MINUTES,
            'p99',
          ),
        ],
        6,
      ),
      graph(
        'API latency p99 per route (ms)',
        perRoute('Latency', cw.Stats.p(99), FIVE_MINUTES),
        6,
      ),
      graph(
        'API 4xx per route',
        perRoute('4xx', cw.Stats.SUM, FIVE_MINUTES),
        6,
      ),
      graph(
        'API 5xx per route',
        perRoute('5xx', cw.Stats.SUM, FIVE_MINUTES),
        6,
      ),
      // The limiter fails open: a rising line means reads go unlimited.
      graph(
        'Rate limiter failures (reads let through)',
        [emf(MetricName.rateLimiterFailures, 'Sum', 'failures', FIVE_MINUTES)],
        6,
      ),
    );

    this.dashboard.addWidgets(header('Functions'));
    this.dashboard.addWidgets(
      graph(
        'Function errors',
        allFunctions.map((name) =>
          lambdaMetric(name, 'Errors', cw.Stats.SUM, FIVE_MINUTES, name),
        ),
        8,
      ),
      graph(
        'Function throttles',
        allFunctions.map((name) =>
          lambdaMetric(name, 'Throttles', cw.Stats.SUM, FIVE_MINUTES, name),
        ),
        8,
      ),
      graph(
        'Sweeps',
        [
          emf(MetricName.staleClustersMarked, 'Sum', 'clusters marked stale'),
          emf(MetricName.eventsExpired, 'Sum', 'events expired'),
        ],
        8,
      ),
    );

    this.dashboard.addWidgets(header('Database'));
    this.dashboard.addWidgets(
      graph('Database CPU (%)', [
        props.database.metricCPUUtilization({ period: ONE_MINUTE }),
      ]),
      graph('Database connections', [
        props.database.metricDatabaseConnections({
          period: ONE_MINUTE,
          label: 'instance',
        }),
        proxyMetric(props.proxy, 'ClientConnections', 'proxy clients'),
        proxyMetric(props.proxy, 'DatabaseConnections', 'proxy → database'),
      ]),
      graph('Database free storage (bytes)', [
        props.database.metricFreeStorageSpace({ period: FIVE_MINUTES }),
      ]),
      graph('Database freeable memory (bytes)', [
        props.database.metricFreeableMemory({ period: FIVE_MINUTES }),
      ]),
    );
  }

  private alarm(id: string, props: cw.AlarmProps): cw.Alarm {
    const alarm = new cw.Alarm(this, id, {
      alarmName: `${Stack.of(this).stackName}-${id}`,
      ...props,
    });
    const action = new cwActions.SnsAction(this.topic);
    alarm.addAlarmAction(action);
    alarm.addOkAction(action);
    this.alarms.push(alarm);
    return alarm;
  }
}

function header(text: string): cw.TextWidget {
  return new cw.TextWidget({ markdown: `## ${text}`, width: 24, height: 1 });
}

function graph(
  title: string,
  metrics: cw.IMetric[],
  width = 6,
): cw.GraphWidget {
  return new cw.GraphWidget({ title, left: metrics, width, height: 6 });
}

/** An EMF metric by name, whatever dimensions it carries. */
function emf(
  metricName: string,
  statistic: string,
  label: string,
  period = ONE_MINUTE,
): cw.IMetric {
  return new cw.SearchExpression({
    expression: `SEARCH('Namespace="${METRICS_NAMESPACE}" MetricName="${metricName}"', '${statistic}', ${period.toSeconds()})`,
    label,
    period,
  });
}

function lambdaMetric(
  functionName: string,
  metricName: string,
  statistic: string,
  period: Duration,
  label?: string,
): cw.Metric {
  return new cw.Metric({
    namespace: 'AWS/Lambda',
    metricName,
    dimensionsMap: { FunctionName: functionName },
    statistic,
    period,
    label,
  });
}

function apiMetric(
  metricName: string,
  dimensionsMap: Record<string, string>,
  statistic: string,
  period = FIVE_MINUTES,
  label?: string,
): cw.Metric {
  return new cw.Metric({
    namespace: 'AWS/ApiGateway',
    metricName,
    dimensionsMap,
    statistic,
    period,
    label,
  });
}

function proxyMetric(
  proxy: rds.DatabaseProxy,
  metricName: string,
  label: string,
): cw.Metric {
  return new cw.Metric({
    namespace: 'AWS/RDS',
    metricName,
    dimensionsMap: { ProxyName: proxy.dbProxyName },
    statistic: cw.Stats.MAXIMUM,
    period: ONE_MINUTE,
    label,
  });
}
