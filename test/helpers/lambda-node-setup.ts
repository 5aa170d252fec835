/**
 * The infra tests' global setup beside global-setup.ts: the Lambda
 * runtime's Node major installed into scripts/node22 once, before any test
 * file runs, so two files that start bundles on it (bundles.test.ts,
 * lambda-runtime.test.ts) never run its first install at the same time in
 * one folder. A no-op where `.ci/run` or an earlier run installed it.
 */
import { lambdaNodeBinary } from './lambda-process.ts';

export function setup(): void {
  lambdaNodeBinary();
}
