/**
 * The maintenance sweeps, each a function on an EventBridge Scheduler
 * schedule: clusters whose agent went quiet are marked disconnected every
 * minute; expired events are removed hourly. Both log in as the
 * maintenance database user. A missed run is harmless (the next one does
 * the same work), so neither retries for long.
 */
import {
  type CfnResource,
  Duration,
  Stack,
  type StackProps,
} from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as scheduler from 'aws-cdk-lib/aws-scheduler';
import { LambdaInvoke } from 'aws-cdk-lib/aws-scheduler-targets';
import type { Construct } from 'constructs';
import {
  type DatabaseLogin,
  ServiceFunction,
} from '../constructs/service-function.ts';
import { acknowledge } from '../nag.ts';
import { functionNames } from '../names.ts';
import type { DeployParameters } from '../parameters.ts';

export interface SweepsStackProps extends StackProps {
  readonly parameters: DeployParameters;
  readonly vpc: ec2.IVpc;
  readonly appSubnets: ec2.SubnetSelection;
  readonly maintenance: DatabaseLogin;
}

export class SweepsStack extends Stack {
  readonly staleClustersFunction: ServiceFunction;
  readonly eventRetentionFunction: ServiceFunction;

  constructor(scope: Construct, id: string, props: SweepsStackProps) {
    super(scope, id, props);
    const { parameters, vpc } = props;
    const names = functionNames(parameters.prefix);

    const securityGroup = new ec2.SecurityGroup(this, 'SweepsSg', {
      vpc,
      description: 'Sweep functions: PostgreSQL through RDS Proxy, HTTPS out',
      allowAllOutbound: true,
    });
    const common = {
      vpc,
      vpcSubnets: props.appSubnets,
      securityGroups: [securityGroup],
      logLevel: parameters.logLevel,
      logRetention: parameters.logRetentionDays as logs.RetentionDays,
    };

    this.staleClustersFunction = new ServiceFunction(this, 'StaleClusters', {
      ...common,
      entry: 'functions/sweeps/stale-clusters.ts',
      functionName: names.staleClusters,
      description: 'Marks clusters whose agent stopped reporting disconnected',
      // Done before the next run starts.
      timeout: Duration.seconds(50),
      environment: {
        STALE_CLUSTER_MINUTES: String(parameters.staleClusterMinutes),
      },
    }).bindDatabase(props.maintenance);

    this.eventRetentionFunction = new ServiceFunction(this, 'EventRetention', {
      ...common,
      entry: 'functions/sweeps/event-retention.ts',
      functionName: names.eventRetention,
      description: 'Deletes Kubernetes events past the retention period',
      timeout: Duration.minutes(5),
      environment: {
        EVENT_RETENTION_HOURS: String(parameters.eventRetentionHours),
        EVENT_HISTORY_DAYS: String(parameters.eventHistoryDays),
      },
    }).bindDatabase(props.maintenance);

    for (const fn of [
      this.staleClustersFunction,
      this.eventRetentionFunction,
    ]) {
      const logicalId = this.getLogicalId(fn.node.defaultChild as CfnResource);
      acknowledge(
        this,
        `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>:*]`,
        'The scheduler role may invoke this one function and its versions (the ":*" suffix), nothing else.',
      );
    }

    new scheduler.Schedule(this, 'StaleClustersSchedule', {
      description: 'Stale-cluster sweep, every minute',
      schedule: scheduler.ScheduleExpression.rate(Duration.minutes(1)),
      target: new LambdaInvoke(this.staleClustersFunction, {
        retryAttempts: 0,
        maxEventAge: Duration.minutes(1),
      }),
    });
    new scheduler.Schedule(this, 'EventRetentionSchedule', {
      description: 'Event retention sweep, hourly',
      schedule: scheduler.ScheduleExpression.rate(Duration.hours(1)),
      target: new LambdaInvoke(this.eventRetentionFunction, {
        retryAttempts: 2,
        maxEventAge: Duration.minutes(30),
      }),
    });
  }
}
