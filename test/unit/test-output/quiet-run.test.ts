/**
 * A test run is a page of results: what the code under test logs (the
 * Powertools logger's JSON lines, EMF metric lines) is shown for a failed
 * test only, beside its failure (vitest.config.ts, test/helpers/
 * quiet-output.ts). Runs vitest as `npm test` does, on a fixture file.
 */
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runProcess } from '../../helpers/run-process.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const FIXTURE = 'test/unit/test-output/noisy.fixture.test.ts';

const runVitest = () =>
  runProcess(
    process.execPath,
    ['node_modules/vitest/vitest.mjs', 'run', '--project', 'unit', FIXTURE],
    {
      cwd: ROOT,
      env: { ...process.env, NOISY_FIXTURE: '1', NO_COLOR: '1', CI: '1' },
    },
  );

describe('a test run', () => {
  it("shows a failed test's log and metric lines, and none of a passing test's", async () => {
    // Act
    const run = await runVitest();

    // Assess
    expect(run.code, run.output).toBe(1);
    expect(run.output).toContain('log line of the failing test');
    expect(run.output).toContain('fixture_failing_total');
    expect(run.output).not.toContain('log line of the passing test');
    expect(run.output).not.toContain('fixture_passing_total');
    expect(run.output).toMatch(/1 failed.*1 passed/);
  });
});
