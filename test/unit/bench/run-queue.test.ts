/**
 * The live benchmark's run-queue waits (bench/run-queue.ts), read from
 * Linux's schedstat (`<run ns> <wait ns> <slices>` per thread): read from a
 * procfs tree of the test's own, so every figure is known.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunQueueWaits, runQueueWaitMs } from '../../../bench/run-queue.ts';

describe('run-queue waits', () => {
  let proc: string;
  beforeEach(() => {
    proc = mkdtempSync(join(tmpdir(), 'proc-'));
  });
  afterEach(() => rmSync(proc, { recursive: true, force: true }));

  /** A thread's schedstat: `waitNs` is its second field. */
  const thread = (pid: number, tid: number, waitNs: number) => {
    mkdirSync(join(proc, String(pid), 'task', String(tid)), {
      recursive: true,
    });
    writeFileSync(
      join(proc, String(pid), 'task', String(tid), 'schedstat'),
      `987654321 ${waitNs} 42\n`,
    );
  };

  it("reads the main thread's wait alone, or the sum of every thread's", () => {
    // Prepare
    thread(100, 100, 5_000_000);
    thread(100, 101, 2_500_000);
    thread(100, 107, 500_000);

    // Act
    const main = runQueueWaitMs(100, 'main', proc);
    const all = runQueueWaitMs(100, 'all', proc);

    // Assess
    expect(main).toBe(5);
    expect(all).toBe(8);
  });

  it('reads nothing of a process that is gone, and skips a thread without schedstat', () => {
    // Prepare
    thread(200, 200, 3_000_000);
    mkdirSync(join(proc, '200', 'task', '201'), { recursive: true });

    // Act / Assess
    expect(runQueueWaitMs(999, 'all', proc)).toBe(0);
    expect(runQueueWaitMs(999, 'main', proc)).toBe(0);
    expect(runQueueWaitMs(200, 'all', proc)).toBe(3);
  });

  it('answers each named group of processes its wait since the previous call', () => {
    // Prepare
    thread(300, 300, 1_000_000);
    thread(300, 301, 9_000_000);
    thread(400, 400, 4_000_000);
    const waits = new RunQueueWaits(
      {
        api: { pids: [300], threads: 'main' },
        both: { pids: [300, 400], threads: 'all' },
        gone: { pids: [999], threads: 'all' },
      },
      proc,
    );
    thread(300, 300, 3_000_000);
    thread(400, 400, 10_000_000);

    // Act
    const first = waits.take();
    thread(300, 301, 9_500_000);
    const second = waits.take();

    // Assess: a wait since the previous reading, not the whole so far.
    expect(first).toEqual({ api: 2, both: 8, gone: 0 });
    expect(second).toEqual({ api: 0, both: 0.5, gone: 0 });
  });
});
