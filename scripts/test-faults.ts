/**
 * `npm run test:faults -- [--runs N] [--seed S]`: the fault histories suite
 * (test/integration/faults/histories.test.ts) as a longer campaign, N
 * generated histories from seed S (FAULT_RUNS, FAULT_SEED). Without
 * options it is the suite's short fixed-seed run, as in CI. Uses
 * DATABASE_URL, else an embedded PostgreSQL (the test setup's choice).
 */
import { spawnSync } from 'node:child_process';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: { runs: { type: 'string' }, seed: { type: 'string' } },
});
const env = { ...process.env };
for (const [name, value] of [
  ['FAULT_RUNS', values.runs],
  ['FAULT_SEED', values.seed],
] as const) {
  if (value === undefined) continue;
  if (!/^[0-9]{1,9}$/.test(value)) {
    console.error(
      `--${name === 'FAULT_RUNS' ? 'runs' : 'seed'}: expected a whole number, got "${value}"`,
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
