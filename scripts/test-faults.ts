/**
 * `npm run test:faults -- [--runs N] [--seed S] [--transport P]`: the fault
 * histories suite (test/integration/faults/histories.test.ts) as a longer
 * campaign, N generated histories from seed S, P % of them over NATS, the
 * bridge and the queue (FAULT_RUNS, FAULT_SEED, FAULT_TRANSPORT_PERCENT;
 * 25 % by default, 0 runs none of them and starts no nats-server). Without
 * options it is the suite's short fixed-seed run, as in CI. Uses
 * DATABASE_URL, else an embedded PostgreSQL (the test setup's choice).
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    runs: { type: 'string' },
    seed: { type: 'string' },
    transport: { type: 'string' },
  },
});
const env = { ...process.env };
for (const [name, value] of [
  ['FAULT_RUNS', values.runs],
  ['FAULT_SEED', values.seed],
  ['FAULT_TRANSPORT_PERCENT', values.transport],
] as const) {
  if (value === undefined) continue;
  const option = {
    FAULT_RUNS: 'runs',
    FAULT_SEED: 'seed',
    FAULT_TRANSPORT_PERCENT: 'transport',
  }[name];
  const valid =
    name === 'FAULT_TRANSPORT_PERCENT'
      ? /^[0-9]{1,3}$/.test(value) && Number(value) <= 100
      : /^[0-9]{1,9}$/.test(value);
  if (!valid) {
    console.error(
      `--${option}: expected ${name === 'FAULT_TRANSPORT_PERCENT' ? 'a percentage from 0 to 100' : 'a whole number'}, got "${value}"`,
    );
    process.exit(2);
  }
  env[name] = value;
}
const result = spawnSync(
  'npx',
  [
    'vitest',
    'run',
    '--project',
    'integration',
    'test/integration/faults/histories.test.ts',
  ],
  { stdio: 'inherit', env },
);
process.exit(result.status ?? 1);
