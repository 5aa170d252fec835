/**
 * Where the cluster metrics live: an Amazon Managed Service for Prometheus
 * workspace (MetricsStack creates one, or `metricsWorkspaceId` names an
 * existing one), signed with SigV4; or, with `metricsUrl`, a
 * Prometheus-compatible store of the operator's own, unsigned. The sync
 * function remote-writes to it and the metrics route's function queries it:
 * ServiceFunction's bindMetricsWriter / bindMetricsReader set the variables
 * and grant exactly that action on the workspace.
 */
import { Aws, Stack, type StackProps } from 'aws-cdk-lib';
import * as aps from 'aws-cdk-lib/aws-aps';
import type { Construct } from 'constructs';
import type { DeployParameters } from '../parameters.ts';

export interface MetricsStoreRef {
  /** The query API's base (`<queryUrl>/api/v1/query_range`). */
  readonly queryUrl: string;
  /** The remote write endpoint. */
  readonly writeUrl: string;
  /** Set for AMP: requests are signed for `aps` in this region. */
  readonly sigv4Region: string | undefined;
  /** Set for AMP: the workspace the grants name. */
  readonly workspaceArn: string | undefined;
}

/** Whether the app creates its own AMP workspace (MetricsStack). */
export function createsMetricsWorkspace(parameters: DeployParameters): boolean {
  return (
    parameters.metricsUrl === undefined &&
    parameters.metricsWorkspaceId === undefined
  );
}

/** The AMP workspace of this deployment. */
export class MetricsStack extends Stack {
  readonly workspaceId: string;

  constructor(
    scope: Construct,
    id: string,
    props: StackProps & { readonly parameters: DeployParameters },
  ) {
    super(scope, id, props);
    this.workspaceId = new aps.CfnWorkspace(this, 'Workspace', {
      alias: `${props.parameters.prefix}-metrics`,
    }).attrWorkspaceId;
  }
}

/**
 * The store the functions bind to. The region, account and partition are
 * pseudo parameters, resolved in each stack that uses them; only a created
 * workspace's id crosses stacks.
 */
export function metricsStoreRef(
  parameters: DeployParameters,
  createdWorkspaceId: string | undefined,
): MetricsStoreRef {
  if (parameters.metricsUrl !== undefined) {
    const base = parameters.metricsUrl.replace(/\/+$/, '');
    return {
      queryUrl: base,
      writeUrl: parameters.metricsWriteUrl ?? `${base}/api/v1/write`,
      sigv4Region: undefined,
      workspaceArn: undefined,
    };
  }
  const workspaceId = parameters.metricsWorkspaceId ?? createdWorkspaceId;
  if (workspaceId === undefined) {
    throw new Error('no metrics store: pass metricsUrl or create a workspace');
  }
  const queryUrl = `https://aps-workspaces.${Aws.REGION}.${Aws.URL_SUFFIX}/workspaces/${workspaceId}`;
  return {
    queryUrl,
    writeUrl: `${queryUrl}/api/v1/remote_write`,
    sigv4Region: Aws.REGION,
    workspaceArn: `arn:${Aws.PARTITION}:aps:${Aws.REGION}:${Aws.ACCOUNT_ID}:workspace/${workspaceId}`,
  };
}
