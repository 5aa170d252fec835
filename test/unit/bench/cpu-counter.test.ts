/**
 * The PostgreSQL CPU count of the benches (bench/common.ts postgresCpuMs):
 * per-process increments over readings of a set of processes that changes
 * between them. Subtracting two sums of the set went negative when a busy
 * backend exited between the readings (docs/slo.md once showed "PostgreSQL
 * -59.1 ms" a request).
 */
import { describe, expect, it } from 'vitest';
import { advanceCpuCounter, type CpuCounter } from '../../../bench/common.ts';

const reading = (entries: Record<string, number>) =>
  new Map(Object.entries(entries));

function counted(...readings: Record<string, number>[]): number[] {
  let counter: CpuCounter | undefined;
  return readings.map((r) => {
    counter = advanceCpuCounter(counter, reading(r));
    return counter.total;
  });
}

describe('advanceCpuCounter', () => {
  it('starts at 0 and adds what each process used since the last reading', () => {
    expect(
      counted({ '10@1': 500, '11@1': 40 }, { '10@1': 530, '11@1': 45 }),
    ).toEqual([0, 35]);
  });

  it('does not go down when a busy process exits between readings', () => {
    // 10 had used 60 s and exits; the sums of the set would fall by 59.9 s.
    expect(counted({ '10@1': 60_000, '11@1': 40 }, { '11@1': 140 })).toEqual([
      0, 100,
    ]);
  });

  it('counts a process that started since the last reading whole', () => {
    expect(counted({ '10@1': 100 }, { '10@1': 110, '12@7': 25 })).toEqual([
      0, 35,
    ]);
  });

  it('takes a reused pid for another process (its start time differs)', () => {
    // pid 10 exited and the kernel gave its number to a new process.
    expect(counted({ '10@1': 900 }, { '10@2000': 30 })).toEqual([0, 30]);
  });

  it('keeps counting across several readings of a changing set', () => {
    expect(
      counted(
        { '10@1': 100 },
        { '10@1': 150, '11@5': 20 },
        { '11@5': 70 },
        { '11@5': 70, '12@9': 5 },
      ),
    ).toEqual([0, 70, 120, 125]);
  });
});
