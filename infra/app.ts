/**
 * The CDK app (`cdk.json`: `npx tsx infra/app.ts`). Stacks are
 * environment-agnostic, so `cdk synth` needs no credentials; `cdk deploy`
 * takes the account and region from the AWS profile in use.
 */
import { App } from 'aws-cdk-lib';
import { buildInventoryApp } from './inventory-app.ts';

buildInventoryApp(new App());
