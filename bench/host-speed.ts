/**
 * How fast the host is right now: a fixed single-threaded workload of the
 * kind the benches' code does (JSON text, sorting rows, hashing), timed as
 * a bench writes its results. The host the figures come from is shared and
 * its speed moves by the hour (the cold-start floor answered in 70 ms one
 * evening and in 178 ms the next night, on the same code); the load average
 * does not see a neighbour on the same physical CPU, this does. Beside each
 * result it tells a slow hour from a slower build: compare a figure with an
 * earlier one only when their probes are close. Lower is faster; it
 * compares runs on one host, not hosts. It is a reading as the run ends,
 * not over the run: the host's speed moves within seconds too (passes of
 * 21–40 ms over 15 s of a quiet minute), so it tells a slow hour from a
 * fast one, not a run's exact speed. A sampler during the run was rejected:
 * on two cores it would time the bench's own load, not the host.
 */
import { createHash } from 'node:crypto';

/** Timed passes (about half a second in all); the reading is their median. */
const RUNS = 15;
const ROWS = 20_000;

interface Row {
  id: number;
  name: string;
  millicores: number;
}

/** One pass; returns a checksum, so the work cannot be optimized away. */
export function probeWorkload(): number {
  const rows: Row[] = Array.from({ length: ROWS }, (_, i) => ({
    id: i,
    name: `pod-${(i * 7919) % ROWS}`,
    millicores: (i * 31) % 977,
  }));
  const text = JSON.stringify(rows);
  const parsed = JSON.parse(text) as Row[];
  parsed.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id,
  );
  const digest = createHash('sha256').update(text).digest();
  return (parsed[0]?.id ?? 0) + (digest[0] ?? 0);
}

/** The median time of a pass, in ms, after one pass to warm the JIT. */
export function hostSpeedMs(): number {
  probeWorkload();
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    probeWorkload();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return Number((times[Math.floor(RUNS / 2)] ?? Number.NaN).toFixed(1));
}
