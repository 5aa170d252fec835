/**
 * The live benchmark's run-queue waits (bench/run-queue.ts), read from
 * Linux's schedstat: how it tells a request that waited for a CPU.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RunQueueWaits, runQueueWaitMs } from '../../../bench/run-queue.ts';

const linux = existsSync(`/proc/${process.pid}/task/${process.pid}/schedstat`);

describe.runIf(linux)('run-queue waits', () => {
  it('reads a process main thread and every thread, the whole at least the main one', () => {
    // Prepare: a Node process has several threads (V8's and libuv's).
    // Act
    const main = runQueueWaitMs(process.pid, 'main');
    const all = runQueueWaitMs(process.pid, 'all');
    // Assess
    expect(Number.isFinite(main)).toBe(true);
    expect(main).toBeGreaterThanOrEqual(0);
    expect(all).toBeGreaterThanOrEqual(main);
  });

  it('reads nothing of a process that is gone', () => {
    // Prepare: pids stop well below 2^22 on Linux.
    const gone = 2 ** 22 + 1;
    // Act / Assess
    expect(runQueueWaitMs(gone, 'all')).toBe(0);
  });

  it('answers each named process wait since the previous call', () => {
    // Prepare
    const waits = new RunQueueWaits({
      self: { pids: [process.pid], threads: 'all' },
      gone: { pids: [2 ** 22 + 1], threads: 'main' },
    });
    // Act
    const first = waits.take();
    const total = runQueueWaitMs(process.pid, 'all');
    // Assess: a wait since the constructor's reading, not the whole so far.
    expect(Object.keys(first).sort()).toEqual(['gone', 'self']);
    expect(first.gone).toBe(0);
    expect(first.self).toBeGreaterThanOrEqual(0);
    expect(first.self).toBeLessThanOrEqual(total);
  });
});
