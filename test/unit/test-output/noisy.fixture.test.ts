/**
 * Run only by quiet-run.test.ts (NOISY_FIXTURE=1), in a vitest of its own:
 * two tests that log as handlers do, one passing and one failing.
 */
import { describe, expect, it } from 'vitest';
import { logger } from '../../../shared/observability/logger.ts';
import { MetricUnit, metrics } from '../../../shared/observability/metrics.ts';

describe.runIf(process.env.NOISY_FIXTURE === '1')('a noisy file', () => {
  it('passes after logging', () => {
    logger.info('log line of the passing test');
    metrics.addMetric('fixture_passing_total', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    expect(1).toBe(1);
  });

  it('fails after logging', () => {
    logger.error('log line of the failing test');
    metrics.addMetric('fixture_failing_total', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
    expect('the failing test').toBe('a passing one');
  });
});
