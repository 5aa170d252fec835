import { defineConfig } from 'vitest/config';

/** Routes what handlers write to stdout through vitest's console capture. */
const setupFiles = ['test/helpers/quiet-output.ts'];

export default defineConfig({
  test: {
    // What a test logged is shown only when it failed (quiet-output.ts
    // brings the Powertools logger's and EMF lines under this too).
    silent: 'passed-only',
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts'],
          sequence: { groupOrder: 0 },
          setupFiles,
          // CPU-bound cases (a generated large inventory, property runs)
          // take seconds on a loaded two-core machine: 5 s is too tight.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          sequence: { groupOrder: 1 },
          setupFiles,
          globalSetup: ['test/helpers/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // Each file gets its own database; two cores run two files at once.
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'infra',
          include: ['test/infra/**/*.test.ts'],
          sequence: { groupOrder: 2 },
          setupFiles,
          // The bundles test runs the built functions against PostgreSQL,
          // on the Lambda runtime's Node, installed once before the files run.
          globalSetup: [
            'test/helpers/global-setup.ts',
            'test/helpers/lambda-node-setup.ts',
          ],
          testTimeout: 120_000,
          // One synth in beforeAll takes over 10 s on a busy two-core machine.
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
