/**
 * The whole deployable app: six stacks in dependency order, and cdk-nag's
 * AwsSolutions checks over all of them (a finding fails the synth).
 * `infra/app.ts` runs it for the CDK CLI; the infra tests build the same app.
 */

import { type App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { FUNCTION_LOGINS } from '../shared/db/roles.ts';
import {
  createsMetricsWorkspace,
  MetricsStack,
  metricsStoreRef,
} from './constructs/metrics-store.ts';
import { type DeployParameters, parametersFromContext } from './parameters.ts';
import { ApiStack } from './stacks/api-stack.ts';
import { DatabaseStack } from './stacks/database-stack.ts';
import { IngestStack } from './stacks/ingest-stack.ts';
import { MonitoringStack } from './stacks/monitoring-stack.ts';
import { NetworkStack } from './stacks/network-stack.ts';
import { SweepsStack } from './stacks/sweeps-stack.ts';

export interface InventoryApp {
  readonly parameters: DeployParameters;
  readonly network: NetworkStack;
  readonly database: DatabaseStack;
  readonly ingest: IngestStack;
  readonly api: ApiStack;
  readonly sweeps: SweepsStack;
  readonly monitoring: MonitoringStack;
  /** Only when the app creates its own AMP workspace. */
  readonly metrics: MetricsStack | undefined;
}

/** Adds the inventory stacks to `app`, configured from its context. */
export function buildInventoryApp(app: App): InventoryApp {
  const parameters = parametersFromContext(app.node);
  const name = (suffix: string) => `${parameters.prefix}-${suffix}`;
  const description = (what: string) => `Kubernetes inventory: ${what}`;

  const network = new NetworkStack(app, name('network'), {
    description: description('VPC, subnets and endpoints'),
    parameters,
  });
  const placement = {
    vpc: network.vpc,
    appSubnets: network.appSubnets,
  };
  const database = new DatabaseStack(app, name('database'), {
    description: description('PostgreSQL, RDS Proxy, logins and migrations'),
    parameters,
    ...placement,
    dataSubnets: network.dataSubnets,
  });
  const metrics = createsMetricsWorkspace(parameters)
    ? new MetricsStack(app, name('metrics'), {
        description: description(
          'Amazon Managed Service for Prometheus workspace',
        ),
        parameters,
      })
    : undefined;
  const metricsStore = metricsStoreRef(parameters, metrics?.workspaceId);
  const ingest = new IngestStack(app, name('ingest'), {
    description: description('NATS bridge, inventory queue and sync'),
    parameters,
    ...placement,
    writer: database.logins[FUNCTION_LOGINS.sync],
    bridgeLogin: database.logins[FUNCTION_LOGINS.bridge],
    metricsStore,
  });
  const api = new ApiStack(app, name('api'), {
    description: description('HTTP API, one function per route'),
    parameters,
    ...placement,
    reader: database.logins[FUNCTION_LOGINS.api],
    webhooks: database.logins[FUNCTION_LOGINS.receiver],
    metricsStore,
  });
  const sweeps = new SweepsStack(app, name('sweeps'), {
    description: description('scheduled sweeps'),
    parameters,
    ...placement,
    maintenance: database.logins[FUNCTION_LOGINS.sweeps],
  });
  const monitoring = new MonitoringStack(app, name('monitoring'), {
    description: description('dashboard and alarms'),
    parameters,
    queue: ingest.queue,
    deadLetterQueue: ingest.deadLetterQueue,
    bridgeService: ingest.bridge.service,
    httpApi: api.httpApi,
    stageName: api.stage.stageName,
    database: database.instance,
    proxy: database.proxy,
  });
  const namesOnly = 'the dashboard and alarms name its functions';
  monitoring.addStackDependency(sweeps, namesOnly);
  monitoring.addStackDependency(api, namesOnly);

  Validations.of(app).addPlugins(new AwsSolutionsChecks(app));

  return {
    parameters,
    network,
    database,
    ingest,
    api,
    sweeps,
    monitoring,
    metrics,
  };
}
