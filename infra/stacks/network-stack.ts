/**
 * The VPC: public subnets only for NAT gateways, private subnets with egress
 * for the functions and the bridge (which reach NATS and the metrics API
 * outside AWS), isolated subnets for the database. AWS services are reached
 * through VPC endpoints, so queue, bucket, secret and log traffic never
 * leaves the VPC and works even without NAT.
 */
import { RemovalPolicy, Stack, type StackProps } from 'aws-cdk-lib';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as logs from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import type { DeployParameters } from '../parameters.ts';

/** A literal, so rules on it stay checkable at synth. */
export const VPC_CIDR = '10.40.0.0/16';

export interface NetworkStackProps extends StackProps {
  readonly parameters: DeployParameters;
}

export class NetworkStack extends Stack {
  readonly vpc: ec2.Vpc;
  /** Where functions and the bridge run. */
  readonly appSubnets: ec2.SubnetSelection;
  /** Where the database and its proxy run. */
  readonly dataSubnets: ec2.SubnetSelection;

  constructor(scope: Construct, id: string, props: NetworkStackProps) {
    super(scope, id, props);
    const { parameters } = props;
    const egress = parameters.natGateways > 0;

    this.vpc = new ec2.Vpc(this, 'Vpc', {
      ipAddresses: ec2.IpAddresses.cidr(VPC_CIDR),
      maxAzs: 2,
      natGateways: parameters.natGateways,
      subnetConfiguration: [
        ...(egress
          ? [
              {
                name: 'public',
                subnetType: ec2.SubnetType.PUBLIC,
                cidrMask: 24,
              },
            ]
          : []),
        {
          name: 'app',
          subnetType: egress
            ? ec2.SubnetType.PRIVATE_WITH_EGRESS
            : ec2.SubnetType.PRIVATE_ISOLATED,
          cidrMask: 20,
        },
        {
          name: 'data',
          subnetType: ec2.SubnetType.PRIVATE_ISOLATED,
          cidrMask: 24,
        },
      ],
      flowLogs: {
        rejected: {
          destination: ec2.FlowLogDestination.toCloudWatchLogs(
            new logs.LogGroup(this, 'FlowLogs', {
              retention: parameters.logRetentionDays,
              removalPolicy: RemovalPolicy.DESTROY,
            }),
          ),
          trafficType: ec2.FlowLogTrafficType.REJECT,
        },
      },
    });
    this.appSubnets = { subnetGroupName: 'app' };
    this.dataSubnets = { subnetGroupName: 'data' };

    this.vpc.addGatewayEndpoint('S3', {
      service: ec2.GatewayVpcEndpointAwsService.S3,
    });
    const interfaceEndpoints: Record<
      string,
      ec2.InterfaceVpcEndpointAwsService
    > = {
      Sqs: ec2.InterfaceVpcEndpointAwsService.SQS,
      SecretsManager: ec2.InterfaceVpcEndpointAwsService.SECRETS_MANAGER,
      Logs: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_LOGS,
      Monitoring: ec2.InterfaceVpcEndpointAwsService.CLOUDWATCH_MONITORING,
      // The bridge pulls its image from ECR.
      EcrApi: ec2.InterfaceVpcEndpointAwsService.ECR,
      EcrDocker: ec2.InterfaceVpcEndpointAwsService.ECR_DOCKER,
    };
    const endpointsSg = new ec2.SecurityGroup(this, 'EndpointsSg', {
      vpc: this.vpc,
      description: 'VPC interface endpoints: HTTPS from inside the VPC',
      allowAllOutbound: false,
    });
    endpointsSg.addIngressRule(
      ec2.Peer.ipv4(VPC_CIDR),
      ec2.Port.tcp(443),
      'HTTPS from the VPC',
    );
    for (const [name, service] of Object.entries(interfaceEndpoints)) {
      this.vpc.addInterfaceEndpoint(name, {
        service,
        subnets: this.appSubnets,
        privateDnsEnabled: true,
        securityGroups: [endpointsSg],
        open: false,
      });
    }
  }
}
