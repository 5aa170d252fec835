/**
 * Bounded memory under the largest and the hostile messages, each read back
 * and parsed in a fresh process (bench/memory-child.ts), from its peak RSS:
 * memory, not time, so a busy machine does not change the verdict. The
 * bounds are generous (several times what was measured, see
 * docs/decisions.md) and still far below what an unbounded read would take.
 */
import { describe, expect, it } from 'vitest';
import {
  MAX_MESSAGE_BYTES,
  measureInChild,
} from '../../../bench/memory-child.ts';
import { MAX_INFLATED_BYTES } from '../../../shared/ingest/queue-message.ts';
import { gzipBomb, inventoryOfSize } from '../../helpers/hostile-bodies.ts';

const MiB = 1024;

describe('memory per message', () => {
  it('parses a message of the largest size within a bounded memory', {
    timeout: 180_000,
  }, () => {
    const body = inventoryOfSize(
      '5f0c1e2a-7b3d-4c9e-8a1f-2d3e4f5a6b7c',
      MAX_MESSAGE_BYTES,
    );
    const figures = measureInChild('max-message', body, false);
    expect(figures.outcome).toMatch(/^parsed: /);
    // About 77 MiB measured for 8 MiB of JSON (55 MiB with Node's default
    // heap; Lambda's is larger); 32 times the body allowed.
    expect(figures.addedKiB).toBeLessThan((32 * MAX_MESSAGE_BYTES) / 1024);
  });

  it('refuses a gzip bomb without inflating it whole', {
    timeout: 180_000,
  }, async () => {
    const inflated = 1024 ** 3;
    const figures = measureInChild('gzip-bomb', await gzipBomb(inflated), true);
    expect(figures.outcome).toMatch(/inflates past 67108864 bytes/);
    // The cap's 64 MiB and the inflater's buffers (about 66 MiB measured),
    // where inflating it whole would take 1 GiB.
    const bound = MAX_INFLATED_BYTES / 1024 + 96 * MiB;
    expect(figures.addedKiB).toBeLessThan(bound);
    expect(bound).toBeLessThan(inflated / 1024 / 4);
  });
});
