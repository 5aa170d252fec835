/**
 * cdk-nag acknowledgements. Every one names the finding in full and says
 * why it is acceptable here; cdk-nag 3 has no prefix matching, so a new
 * finding of the same rule still fails the synth.
 */
import { Validations } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

export const LAMBDA_BASIC_EXECUTION =
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]';
export const LAMBDA_VPC_ACCESS =
  'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaVPCAccessExecutionRole]';
export const WILDCARD_RESOURCE = 'AwsSolutions-IAM5[Resource::*]';

/** Acknowledges one cdk-nag finding on a construct and everything below it. */
export function acknowledge(
  scope: IConstruct,
  id: string,
  reason: string,
): void {
  Validations.of(scope).acknowledge({ id, reason });
}
